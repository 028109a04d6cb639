// Package streamsink bounds, sanitises and preserves the text output of one
// executed cell.
//
// Every text chunk of a cell (stdout, stderr, traceback text, display text:
// what a renderer shows of a display, its text/markdown, else text/plain,
// an empty one passed over for HTML, else the text of its HTML, or for HTML
// above the inline limit a line naming it) passes through one [Sink]. The
// sink
//
//   - sanitises each chunk and hands it back for live forwarding: the result
//     is well-formed UTF-8 (invalid bytes and UTF-8-encoded surrogates become
//     U+FFFD, also when a sequence is split across chunks), ANSI CSI, OSC
//     (including OSC 8 hyperlinks), DCS/SOS/PM/APC and other escape sequences
//     are removed even when split across chunks (an OSC left unterminated
//     ends at a newline), CRLF becomes LF, and control
//     characters other than "\n", "\t" and a lone "\r" are removed. A lone
//     "\r" stays in the live text so terminals can redraw progress bars;
//   - keeps a bounded tail (Options.MaxBytes, Options.MaxLines) of the
//     sanitised text in which "\r" progress lines are collapsed to their final
//     state, cut at the start of a line (a last line longer than the tail
//     keeps its end, cut on a UTF-8 boundary), the same however the text
//     was split into writes;
//   - counts total and kept lines and bytes;
//   - spills: once the output no longer fits the tail (or its raw form exceeds
//     MaxBytes, or a line is clamped to MaxColumns), the complete output
//     from its first byte (stream text raw, traceback and display text as
//     the frames carry them) is written to an artifact "<seq>.eval.log" in
//     a [Store], referenced as "artifact://<id>".
//     The artifact is bounded while it is written, by Options.ArtifactCap or
//     else the store's cap ([Store.ArtifactLimit]): past it, it keeps only a
//     head and a tail around a line "[ARTIFACT TRUNCATED: …]", and the
//     notice says it was capped. With Options.NoSpill nothing is spilled:
//     the caller shows every byte whole, and a copy on disk would cost more
//     than the rest of the sink;
//   - with Options.Passthrough, hands stdout and stderr back as written and
//     only counts them: for a caller whose reader expects the program's own
//     bytes (`evalhost run` into a pipeline or a file), where sanitising
//     would change them and cost a pass over every byte;
//   - with Options.Verbatim, hands every text back as the interpreter wrote
//     it, escape sequences, "\r\n" and control characters included, with
//     only what is not UTF-8 in stream text replaced as the sanitiser
//     replaces it (also across chunks): for a caller that stores it where
//     renderers interpret it (a notebook, as Jupyter keeps ANSI colours);
//     the tail and the dump are sanitised as without it, and the artifact
//     gets traceback and display text as the frames carry them, as it came;
//   - moves display payloads larger than Options.InlineLimit (base64 images,
//     large HTML or JSON) out of frames into files of the store, see
//     [Sink.Frame] and [MetadataKey].
//
// A [Store] writes artifacts 0600. A directory it owns is made 0700 (an
// existing one with looser modes is tightened, one of another user is
// refused); a user's directory ([StoreOptions.UserDir], $PI_ARTIFACTS_DIR)
// keeps its modes but is refused, as every directory evalhost writes the
// user's files into, when another user could swap what is in it: owned by
// someone other than the user or root, writable by others without the
// sticky bit, a link of another user's or under a directory of theirs
// (package trustdir's WriteDir). A missing user's directory is made 0700,
// as ~/.evalhost is, by one mkdir in a directory that exists (judged
// first, trustdir's MakeIn), never with what is above it: its parent
// missing is a mistake to report, not a path to make (as root, a
// /nonexistent/... made a system user's home). [StoreFromEnv] refuses such
// a $PI_ARTIFACTS_DIR up front ([CheckUserDir]: the variable, its value,
// what is missing and the mkdir that mends it). A refused directory is a notice, as an
// unwritable one is; either names the path as trustdir.Shown prints it
// (quoted when it holds a newline, an escape or another character that is
// not printable), since another user may have chosen the name.
// In a directory it owns, every finished artifact enforces the retention
// ([DefaultRetention]) and the total size cap ([DefaultMaxTotal],
// $EVALHOST_ARTIFACTS_MAX through [StoreFromEnv], whose bad value is an
// error and no store, not the default), oldest first; never the
// newest id (an id is never handed out twice) nor an artifact being
// written: by any Store of this process (known in-process, since on NFS a
// lock never excludes its own process), or by another process, whose
// writer flocks it. The limits remove another file only when they take its
// lock, opening it for writing as NFS's fcntl locks need; one whose lock
// they cannot test (no locks on the file system, an error that is not
// "locked") is left until it has gone unwritten for a day, so there the
// directory may hold a day's artifacts beyond its cap, no more. A file
// written or replaced since the limits listed it (its name freed and taken
// again) is left to their next pass.
// [Store.Enforce] applies both at once, as a long-lived process starts;
// [Store.Prune] applies the retention alone.
// The notice of a spilled cell names the artifact and its file. A caller of
// [Store.Create] must call [Store.Finish] with the id when the file is
// written or given up; until then the limits leave it alone.
//
// The sink never fails the cell: an artifact that cannot be written degrades
// to in-memory truncation and a notice in the [Dump]. Its memory is bounded by
// the options whatever the length of the stream. A display's text is read a
// piece at a time ([frames.Bundle.Pieces]), never held decoded, so a display
// of hundreds of megabytes costs the sink little beyond the frame itself;
// text/plain gains the lines naming moved payloads the same way. A payload
// moved to the store is written as it is decoded, and decoded once: an
// image whose value turns out not to be base64 is stored as its text
// instead, in a new file. A text that sanitising changes gets a new value,
// which the frame must carry, made in one buffer that a bound on its size
// fixes: about the text's size, but up to six times it for a text of HTML
// characters or U+2028, which json.Marshal escapes. Frame, tail and
// artifact are as if each text were decoded and sanitised whole.
//
// Use: one sink per cell, [New] with a [Store] on [ArtifactsDir]; pass every
// frame of the cell through [Sink.Frame] and forward what it returns (or raw
// chunks through [Sink.Append] / [Sink.Write]); at cell end [Sink.Close],
// then put [Sink.Dump] into the summary. [Sanitize] cleans a whole string
// the same way for renderers that show text which never went through a sink,
// and [DisplayText] is a display's text as a renderer shows it, so cleaned:
// the text of its HTML too, which a sink leaves as it came, or, above
// [DefaultInlineLimit], the HTML's size, as the dump names it.
//
// A Sink is safe for concurrent use. Chunks of one stream must arrive in
// order; stdout and stderr keep separate sanitiser state (an escape sequence
// split across two stdout chunks is not disturbed by stderr between them)
// but share one tail, in arrival order.
package streamsink
