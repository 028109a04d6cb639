package streamsink

import (
	"errors"
	"fmt"
)

// Defaults for the zero fields of [Options].
const (
	DefaultMaxBytes    = 50 << 10
	DefaultMaxLines    = 3000
	DefaultMaxColumns  = 4000
	DefaultInlineLimit = 256 << 10
)

// maxRingHold bounds the in-memory tail of a head+tail artifact, so that a
// large ArtifactCap does not turn into a large buffer.
const maxRingHold = 4 << 20

// ErrBadOptions is wrapped by the error [New] returns for invalid options.
var ErrBadOptions = errors.New("streamsink: bad options")

// Options configures a [Sink]. Zero fields take the defaults above.
type Options struct {
	// Store receives artifacts and large display payloads. Nil keeps
	// nothing on disk: output beyond the tail is only counted.
	Store *Store
	// MaxBytes bounds the kept tail, in bytes of sanitised text.
	MaxBytes int
	// MaxLines bounds the kept tail, in lines.
	MaxLines int
	// MaxColumns clamps each line of Dump().Text to this many characters.
	MaxColumns int
	// ArtifactCap, when positive, bounds the artifact: it keeps the first
	// bytes and the last min(ArtifactCap/2, 4 MiB) bytes of the raw stream
	// around an "[ARTIFACT TRUNCATED: …]" line, and never holds more on
	// disk while it is written. Zero takes the store's bound
	// ([Store.ArtifactLimit]: its MaxTotal, none in a UserDir); a
	// positive value above that bound is lowered to it.
	ArtifactCap int64
	// NoSpill says the caller shows every byte of the text live to a
	// reader who keeps it (run without --max-output, run --json), so an
	// artifact would be a second copy of what was seen: the text is still
	// sanitised, counted and tailed, but never written to the store.
	// Display payloads above InlineLimit still go to the store.
	NoSpill bool
	// Passthrough says the caller hands stdout and stderr, as the
	// interpreter wrote them, to a reader that expects the program's own
	// bytes (run into a shell pipeline or a file): stream text comes back
	// from the sink unchanged (not sanitised, nothing held back) and is
	// only counted (TotalBytes), not tailed or spilled. Display and
	// traceback text is still sanitised and tailed.
	Passthrough bool
	// Verbatim says the caller keeps the text as the interpreter wrote it,
	// as a notebook does (Jupyter stores ANSI colours, "\r\n" and control
	// characters, and its renderers interpret them): stream text comes back
	// as written, except bytes that are not UTF-8, which become U+FFFD as
	// the sanitiser makes them (also across chunks); traceback lines,
	// evalue and display text come back unchanged. The tail and the dump
	// are as without it. The artifact, which gets stream text as it came
	// either way, gets traceback and display text as the frames carry
	// them: with Verbatim as they came, else sanitised. Passthrough
	// overrides it for stdout and stderr.
	Verbatim bool
	// InlineLimit is the largest display payload (its JSON encoding) kept
	// inline in a frame; larger ones go to the store. Negative keeps all
	// payloads inline.
	InlineLimit int
}

func (o Options) withDefaults() (Options, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBytes", int64(o.MaxBytes)},
		{"MaxLines", int64(o.MaxLines)},
		{"MaxColumns", int64(o.MaxColumns)},
		{"ArtifactCap", o.ArtifactCap},
	} {
		if f.v < 0 {
			return o, fmt.Errorf("%w: %s is %d; use a positive value, or 0 for the default", ErrBadOptions, f.name, f.v)
		}
	}
	if o.ArtifactCap > 0 && o.ArtifactCap < 64 {
		return o, fmt.Errorf("%w: ArtifactCap %d is too small to hold a head and a tail; use at least 64 bytes, or 0 for a full artifact", ErrBadOptions, o.ArtifactCap)
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxBytes < 4 {
		return o, fmt.Errorf("%w: MaxBytes %d cannot hold one character; use at least 4", ErrBadOptions, o.MaxBytes)
	}
	if o.MaxLines == 0 {
		o.MaxLines = DefaultMaxLines
	}
	if o.MaxColumns == 0 {
		o.MaxColumns = DefaultMaxColumns
	}
	if o.InlineLimit == 0 {
		o.InlineLimit = DefaultInlineLimit
	}
	return o, nil
}
