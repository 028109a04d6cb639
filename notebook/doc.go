// Package notebook edits Jupyter .ipynb files losslessly and builds the
// outputs of their code cells.
//
// Contract:
//   - [Parse]/[Load] validate a notebook (JSON, a "cells" array, cell objects
//     with a string cell_type, source a string or array of strings) and say
//     what is wrong and where ([*SyntaxError] with line and column,
//     [*StructureError] with cell index and field; both match [ErrInvalid]).
//     A key given twice in an object has its last value in its first
//     place, as Python's json reads it, so evalhost sees the notebook
//     Jupyter shows (an edit writes the key once).
//     An nbformat 3 notebook (worksheets) is converted to nbformat 4.5 as
//     it is read, as nbformat.read(as_version=4) converts it for Jupyter,
//     nbclient and papermill (v4.convert.upgrade: worksheets flattened,
//     heading cells as markdown "#" titles, input and prompt_number as
//     source and execution_count, pyout and pyerr as execute_result and
//     error, v3 output keys as MIME types, each cell a new id), and is
//     written as nbformat writes that (sorted keys, its layout); older
//     formats are refused with the nbconvert command that converts them,
//     and a newer major format than 4 as nbformat.read refuses it.
//     NaN, Infinity and -Infinity are numbers, as Python's json (and so
//     nbformat and papermill) writes and reads them; [Notebook.Metadata]
//     keeps them, which encoding/json refuses and [Members] reads.
//   - The model keeps the file's JSON text: key order, unknown fields, the
//     spelling of every number and string, the indent unit, the line ends ("\n" or "\r\n")
//     and the final newline (indent=0's line breaks without indent too).
//     [Notebook.Bytes] of an unedited notebook is the file it was
//     parsed from, whatever its layout; an edit changes only the touched
//     cells' lines (and Save the ids it repairs, below), except in a layout
//     json.dumps does not write (short arrays on one line), which an edit
//     writes in nbformat's. New values are written as nbformat writes
//     them (json.dumps indent=1, sorted keys, ensure_ascii=False, multiline
//     text split with str.splitlines(True)).
//   - [Notebook.Text] is the editable view: "# %% [code|markdown|raw] cell:N"
//     markers, every line "\n"-terminated, source lines that start with
//     "# %%" behind any backslashes escaped with one more backslash.
//     [Notebook.ApplyText] is its inverse (a leading byte order mark is
//     dropped, "\r\n" line ends read as "\n" when every line has one): text
//     before the first marker and bad markers are [*TextError]s ([ErrBadText]). A cell:N naming no
//     original cell, or one already reused above, makes a new cell, as in the
//     reference runtime. Reused cells keep metadata, outputs, attachments and id; new cells get
//     nbformat-style ids (8 hex digits) in nbformat >= 4.5 notebooks; code
//     cells have execution_count and outputs, markdown and raw cells do not.
//   - A cell whose type is not code, markdown or raw (a newer nbformat 4.x
//     may add types) is kept byte for byte and is read-only: the view marks it
//     "# %% [TYPE] cell:N (read-only: ...)" (TYPE Go-quoted unless a plain
//     word) and shows its source if it has one as text; ApplyText lets it
//     be kept, moved or deleted, and any other change to it, or a new cell of
//     an unknown type, is a [*TextError]. [Notebook.Edit] of it is a
//     [*ReadOnlyCellError] ([ErrReadOnly]). So a notebook Parse accepts
//     survives view → apply byte for byte.
//   - [Notebook.Edit], [Notebook.Insert], [Notebook.Delete] are the cell
//     actions; a bad index is an [*IndexError] ([ErrIndex]).
//   - [Notebook.Save] and [WriteFile] write through a temp file in the same
//     directory, fsync and rename: on any failure the file is unchanged.
//     Save (and SaveUnsynced) of an nbformat 4.5+ notebook first gives each
//     code, markdown and raw cell without a valid, unique id a new one, as
//     nbformat's writer repairs missing and duplicate ids (the first of a
//     duplicate keeps it; an id its schema refuses is replaced too); 4.4
//     and older, whose schema has no ids, are written as they are. A symlink
//     is written through (a dangling one's target is created), but not one
//     into a directory that does not exist (a *LinkDirError, matching
//     fs.ErrNotExist, from Lock and every write: which link points where,
//     which directory is missing; nothing is made), and not
//     one fs.protected_symlinks would refuse: in a sticky, world-writable
//     directory, owned by neither this user nor the directory's owner
//     (a *LinkError, ErrPlantedLink; [Lock] refuses it too); a read-only
//     file is refused. [CheckWritable]
//     makes the same checks and a temp file, without writing, for a caller
//     that must not do long work toward a file it cannot write.
//     [Notebook.SaveUnsynced] is Save without the fsyncs, for progress
//     writes.
//   - [Notebook.Bytes] and Save encode only the cells that changed since
//     the notebook was last encoded (each cell's text is kept until the
//     cell changes), and Save's id repair checks ids only when a cell was
//     added, moved or removed or a cell's id or type changed since the
//     last repair; the output is byte for byte what encoding every value
//     afresh writes. After a save, the next save's check compares the file
//     with the bytes written (a [Stamp] only for a file that was read). So
//     a progress save after each cell costs about a copy of the file. A
//     saved notebook holds its last encoding (the cache's text), and one
//     spare buffer for the next while the file is under 32 MiB. A notebook
//     past that, or whose changed cells hold more (a run's big outputs),
//     is saved streamed: its encoding written to the temp file a MiB at a
//     time and hashed for the next save's check, with no buffer of the
//     file's size (and, in Save, not parsed again: it is made of values
//     this package parsed or built).
//   - [Notebook.Insert] and [Notebook.ApplyText] grow a notebook to at most
//     [MaxCells] cells ([ErrTooLarge], [ErrBadText] for text). Save writes
//     a notebook of any size, as nbformat does, so a run's outputs past
//     [MaxFileBytes] (which Load refuses) are not lost.
//   - [Load] and [ReadFile] read a file bounded by [MaxFileBytes]
//     ([ErrTooLarge]); one they cannot open or read is a [*FileError]
//     ("cannot open x.ipynb: no such file or directory", matching
//     fs.ErrNotExist and the like; a symlink to nothing says where it
//     points: [OpenError]), as is a path that names no regular
//     file, refused at once and never read: a FIFO (whose open or read
//     would wait for a writer for ever), a socket, a device, a directory.
//     Its cause, a [*NotRegularError] ([ErrNotRegular]), says what the
//     path is and what to do ("cannot read x.ipynb: it is a named pipe
//     (FIFO), not a regular file, and its read waits for a writer, ...").
//     [OpenRegular] is that open (O_NONBLOCK, O_NOCTTY, then fstat), for
//     callers that read other files the same way (cmd/evalhost's nb);
//     [OpenInput] is the same open for a file only read, never saved
//     over, which may also be a pipe (bash's <(...)); it says which it
//     opened, from that fstat.
//     A save's target that is no regular file is refused the same way
//     ("write notebook out.ipynb: it is a named pipe (FIFO), ...").
//   - A path in an error's text (the notebook, its directory, its lock or
//     temp file, in a *FileError, *ConflictError, *LockedError, *LinkError
//     and a save's or lock's failure) is printed by trustdir.Shown: as it
//     is, or quoted Go-style when it holds a character that is not
//     printable (an escape sequence, a newline, U+2028), and an os error
//     wrapped in one by trustdir.ShownError. A notebook's name is often
//     another user's to choose (a cloned repository), and a raw one could
//     drive the reader's terminal or fake a line of the message. The
//     errors' Path fields hold the path as given.
//   - [Load], [LoadOrNew] and
//     [ParseFile] remember the file read and a [Stamp] of its
//     content; [Notebook.Save] to that file refuses, with a [*ConflictError]
//     ([ErrConflict]) and nothing written, when the file no longer holds
//     what was read or last saved: another edit is never silently undone.
//     So does a save to the name it was read from when that name now leads
//     to another file (a symlink repointed). The error says whether the
//     file was written in place, replaced by another (renamed over it, a
//     link repointed: ConflictError.Replaced, from the file's identity as
//     read or last written) or removed. The check reads the file as it
//     streams (any size) and refuses one that is not a regular file.
//     [WriteFileIfUnchanged] is the same check for bytes. A notebook bound
//     to a file that is not there ([LoadOrNew] of a missing file, [NewAt])
//     or a WriteFileIfUnchanged of the zero Stamp takes the name only
//     while it is free, in the rename itself (RENAME_NOREPLACE on Linux, a
//     hard link elsewhere; a file system with neither, FAT, keeps the
//     check alone): a file another program makes after the check is kept.
//     Its *ConflictError says what took the name ([Occupant], in There)
//     when "created by someone else" would mislead: a dangling symlink
//     (which reads as missing), another user's file, a FIFO or the like.
//   - [Lock] serialises evalhost writers of one notebook (processes and
//     goroutines alike, through a lock file beside it that Unlock removes,
//     and within a process by an in-process lock of its own, since NFS's
//     flock, an fcntl lock, does not exclude one process's opens);
//     hold it from load to save. Waiting ends with the caller's context (a
//     [*LockedError], [ErrLocked]); a symbolic link where the lock file goes
//     is refused, not followed ([ErrBadLockFile]), and so is what is no
//     regular file there (a FIFO, whose open does not wait; a socket, a
//     device, a directory), which is left as it is. Locking a notebook the caller already
//     holds waits for itself: that call is wrong. The first Lock of a
//     notebook in a process (not every one: it lists the directory)
//     removes what saves killed mid-write left beside the notebook: its
//     temp files (".NAME.<digits>.tmp"), regular files of this user's,
//     never through a link, whose flock it takes. A save flocks its temp
//     file from its creation to its rename, so one that does not hold the
//     lock loses nothing to a sweep (the lock is still what keeps writers
//     apart). Where there is no flock, and on NFS (whose flock, an fcntl
//     lock, a read-only open cannot take), nothing is removed.
//   - [Output] values are nbformat outputs built as nbformat writes them
//     ([StreamOutput], [DisplayData], [ExecuteResult], [ErrorOutput],
//     [Output.WithBundle] for display updates); a MIME bundle or metadata
//     that is not valid JSON is an error. [Notebook.SetOutputs] and
//     [Notebook.SetExecutionCount] write them into a code cell (any other
//     cell is an error); [Notebook.SetLanguageInfo] writes
//     metadata.language_info as nbclient does after a run. Turning
//     execution frames into outputs is package nbrun's.
//   - [Notebook.SetMetadata] and [Notebook.SetCellMetadata] set a member of
//     the notebook's or a cell's metadata to a Go value (nil, bool, int,
//     float64, json.Number, string, json.RawMessage, []any, map[string]any)
//     written as nbformat's json.dumps writes it (sorted keys, Python's
//     float repr, NaN); [Notebook.SetMetadataMembers] and
//     [Notebook.SetCellMetadataMembers] set many at once, at a cost that
//     grows with their number (a member at a time copies those before
//     it); [Notebook.DeleteMetadata] and
//     [Notebook.DeleteCellMetadata] remove one;
//     [Notebook.Metadata] reads a notebook member's JSON. A cell of an
//     unknown type is a [*ReadOnlyCellError].
//
// It imports no other evalhost package but internal/flock.
package notebook
