package notebook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// Load reads and validates the notebook at path. A missing file is an error
// matching fs.ErrNotExist; use LoadOrNew to start from an empty notebook.
// The notebook remembers the file it was read from and a Stamp of it, which
// Save checks.
func Load(path string) (*Notebook, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFile(path, data)
}

// ReadFile reads the file at path whole, as Load does: bounded by
// MaxFileBytes (ErrTooLarge), and a file that cannot be opened or read is
// a *FileError ("cannot open x.ipynb: no such file or directory"), which
// matches the cause (fs.ErrNotExist...).
func ReadFile(path string) ([]byte, error) {
	return readLimited(path, MaxFileBytes)
}

// MaxFileBytes bounds what Load reads: notebooks keep their images
// inline, yet a file past this is no notebook a person edits. Save writes
// a larger one (a run's outputs), as nbformat writes any size, rather than
// lose it; Jupyter reads it.
const MaxFileBytes = 256 << 20

// readBackBytes is MaxFileBytes, the largest file Save checks by parsing
// it again as Load would; tests lower it.
var readBackBytes = MaxFileBytes

// MaxCells bounds the cells Insert and ApplyText make a notebook hold:
// each costs about 1 KB in memory and 10 µs, so 10 MB of "# %%" lines
// took 5.8 GB and half a minute, and wrote a file Load refuses.
const MaxCells = 20000

// ParseFile is Parse of data read from path by the caller, remembering the
// file and a Stamp of data as Load does, so that Save checks it.
func ParseFile(path string, data []byte) (*Notebook, error) {
	nb, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", trustdir.Shown(path), err)
	}
	nb.origin, nb.named, nb.held = canonical(path), absolute(path), held{stamp: StampOf(data)}
	nb.held.file, _ = os.Stat(path) // read by the caller: the file there now, as near as can be
	return nb, nil
}

// readLimited reads path whole, refusing a file larger than limit instead
// of running out of memory, and what is not a regular file (OpenRegular).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	var nr *NotRegularError
	if errors.As(err, &nr) {
		nr.Notebook = true // its advice for a directory names a .ipynb file
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &FileError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d MiB", ErrTooLarge, trustdir.Shown(path), limit>>20)
	}
	return data, nil
}

// LoadOrNew is Load, but a missing file gives an empty nbformat 4.5 notebook
// whose Save refuses to replace a file someone else created meanwhile.
func LoadOrNew(path string) (*Notebook, error) {
	nb, err := Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewAt(path), nil
	}
	return nb, err
}

// NewAt is an empty nbformat 4.5 notebook bound to path as a file that is
// not there: whatever is there is not read, and Save writes path only
// while nothing is there (a file made meanwhile is a *ConflictError).
// It is LoadOrNew for a caller that found path missing itself: a
// LoadOrNew then would read a file made since.
func NewAt(path string) *Notebook {
	nb := New()
	nb.origin, nb.named = canonical(path), absolute(path)
	return nb
}

// Save validates the notebook's JSON and writes it to path atomically
// (WriteFile). On any error the file is left exactly as it was. In an
// nbformat 4.5+ notebook, a cell without a valid, unique id first gets a
// new one (in nb too), as nbformat's writer repairs it.
//
// When path is the file nb was loaded from (or last saved to), Save first
// checks that the file still holds what was read or written then: if not,
// another edit or program changed it, and Save returns a *ConflictError
// (ErrConflict) rather than undo that change. The check and the rename are
// one step for other evalhost writers only while the caller holds
// Lock(path); without it a writer may still slip in between them. A save
// to another path writes unconditionally, and that path becomes the one
// later saves check. A save to the same name that now leads to another
// file (a symlink repointed) is checked the same way, against what was
// read, so it is a conflict too.
func (nb *Notebook) Save(path string) error {
	nb.repairCellIDs()
	if nb.streams() {
		// Built of values this package parsed or made, as every
		// encoding; too big to hold whole to parse again.
		return nb.saveStreamed(path, true)
	}
	data := nb.encode()
	if err := checkOwnEncoding(data); err != nil {
		return fmt.Errorf("refusing to write %s, the result would be invalid: %w", trustdir.Shown(path), err)
	}
	return nb.save(path, data, true)
}

// checkOwnEncoding is Save's check of its own encoding: Parse, as Load would
// read it back, for a file Load reads; a larger one (which only a run's
// outputs make) is checked as JSON without building its tree, which cost
// several times the file's size in memory.
func checkOwnEncoding(data []byte) error {
	if len(data) <= readBackBytes {
		// Parsed in place: the tree is dropped before data changes.
		root, err := parseJSON(unsafe.String(unsafe.SliceData(data), len(data)))
		if err == nil {
			err = validate(root)
		}
		return err
	}
	if !json.Valid(data) {
		return fmt.Errorf("%w: not valid JSON", ErrInvalid)
	}
	return nil
}

// SaveUnsynced is Save for a long job's progress (nb run after each
// cell): the same check, id repair and atomic rename, but no fsync, which costs more
// than a small cell, and no re-validation of the notebook's own encoding.
// A crash of the machine may lose what it wrote; the job's last write
// should be a Save.
func (nb *Notebook) SaveUnsynced(path string) error {
	nb.repairCellIDs()
	if nb.streams() {
		return nb.saveStreamed(path, false)
	}
	return nb.save(path, nb.encode(), false)
}

func (nb *Notebook) save(path string, data []byte, sync bool) error {
	file, err := writeFile(path, data, nb.expectedAt(path), sync)
	if err != nil {
		return err
	}
	// Named again: a dangling symlink's target exists now. data is not
	// changed later: it is encode's buffer.
	prev := nb.held
	nb.origin, nb.named, nb.held = canonical(path), absolute(path), heldBytes(data)
	nb.held.file = file
	if len(data) > maxHeldBytes {
		// A big notebook (a run's outputs) keeps no copy of its file: its
		// next save streams its encoding (streamsave.go) and checks the
		// file by its hash. A 300 MB output's saves allocated a buffer of
		// the file's size each, and their garbage took RSS to 2 GB.
		nb.held = held{stamp: StampOf(data), file: file}
		nb.cache.drop()
		nb.free = nil
		return nil
	}
	if prev.haveData {
		nb.release(prev.data)
	}
	return nil
}

// expectedAt is what a save to path checks the file still holds: what nb
// read or last wrote there; nil for another file.
func (nb *Notebook) expectedAt(path string) *held {
	switch {
	case nb.origin != "" && canonical(path) == nb.origin:
		return &nb.held
	case nb.named != "" && absolute(path) == nb.named:
		// The name read now leads elsewhere (a link repointed, a
		// directory renamed): what is there is not what was read, and
		// writing over it unchecked would undo whatever it holds.
		return &nb.held
	}
	return nil
}

// maxHeldBytes is the largest saved file a notebook keeps the bytes of,
// for its cell cache and its next save's check; tests lower it.
var maxHeldBytes = maxSpare

// WriteFileIfUnchanged is WriteFile, but only while path still holds what
// expected stamps (the zero Stamp: while path does not exist); otherwise it
// writes nothing and returns a *ConflictError. It returns the Stamp of the
// file written. Hold Lock(path) around it to keep other evalhost writers
// out between the check and the rename.
func WriteFileIfUnchanged(path string, data []byte, expected Stamp) (Stamp, error) {
	if _, err := writeFile(path, data, &held{stamp: expected}, true); err != nil {
		return Stamp{}, err
	}
	return StampOf(data), nil
}

// WriteFile replaces path with data so that readers see the old file or
// the new one, never a part: it writes a temp file in the same directory,
// fsyncs it, renames it over path and fsyncs the directory. The file keeps
// its permission bits, and its owner and group as far as this user may
// give them (keepOwner); a new file gets those open(2) gives it, 0666 less
// the umask, as nbformat.write (Jupyter, papermill) makes one. A symlink is written through
// (its target is replaced, the link stays) and a read-only file (no write
// bit) is refused, as an in-place write would be. On error path is
// unchanged and the temp file is removed.
func WriteFile(path string, data []byte) error {
	_, err := writeFile(path, data, nil, true)
	return err
}

// writeFile is WriteFile that, given what the file is expected to hold,
// checks it just before the rename; without sync it does not fsync. It
// returns the file written, as its temp file's fstat.
func writeFile(path string, data []byte, expected *held, sync bool) (fs.FileInfo, error) {
	return writeFileWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, expected, sync)
}

// writeFileWith is writeFile of what write writes to the temp file.
func writeFileWith(path string, write func(io.Writer) error, expected *held, sync bool) (file fs.FileInfo, err error) {
	path, perm, orig, err := writableTarget(path)
	if err != nil {
		return nil, err
	}
	f, err := createTemp(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if tempCreated != nil {
		tempCreated(f.Name())
	}
	if err = write(f); err != nil {
		return nil, writeError(path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return nil, writeError(path, err)
	}
	if orig != nil {
		keepOwner(f, orig)
	}
	if sync {
		if err = f.Sync(); err != nil {
			return nil, fmt.Errorf("write notebook %s: fsync: %w", trustdir.Shown(path), trustdir.ShownError(err))
		}
	}
	// The temp file stays marked until it is renamed, so that a Lock's
	// sweep cannot take it from a save that does not hold the Lock.
	release := holdMark(f)
	defer release()
	file, _ = f.Stat() // the inode the rename keeps: a later conflict tells a file renamed over it
	if err = f.Close(); err != nil {
		return nil, writeError(path, err)
	}
	if tempClosed != nil {
		tempClosed(f.Name())
	}
	if expected != nil {
		if err = checkHolds(path, expected); err != nil {
			return nil, err
		}
	}
	if beforePublish != nil {
		beforePublish(path)
	}
	if err = publish(f.Name(), path, expected); err != nil {
		return nil, err
	}
	if sync {
		syncDir(filepath.Dir(path))
	}
	return file, nil
}

// publish puts the temp file in path's place. A file expected not to be
// there (a new notebook's first save) is put there only while nothing is,
// in one step (publishNew), so that a file another program makes between
// the check and the rename is not replaced; where the file system cannot
// (no hard links), the check just made is all there is.
func publish(temp, path string, expected *held) error {
	if expected != nil && expected.none() {
		err := publishNew(temp, path)
		if errors.Is(err, fs.ErrExist) {
			found, _ := readStamp(path)
			return &ConflictError{Path: path, Found: found, There: occupantOfNew(path)}
		}
		if !errors.Is(err, errNoExclusive) {
			return err
		}
	}
	if err := os.Rename(temp, path); err != nil {
		return writeError(path, err)
	}
	return nil
}

// occupantOfNew is what took the name a new file was to take, for its
// ConflictError: nil when "created by someone else" says it (a file of
// the user's own, or nothing there any more).
func occupantOfNew(path string) *Occupant {
	if o, ok := OccupantOf(path); ok && !o.Plain() {
		return &o
	}
	return nil
}

// writeError is a save's failure to write path: the path by
// trustdir.Shown, and err, an os error naming the temp file (whose name
// holds path's), by trustdir.ShownError. A notebook's name is often
// another user's to choose (a cloned repository), and printed raw an
// escape sequence in it drives the reader's terminal.
func writeError(path string, err error) error {
	return fmt.Errorf("write notebook %s: %w", trustdir.Shown(path), trustdir.ShownError(err))
}

// errNoExclusive: the file system cannot create a name only while it is
// free (no RENAME_NOREPLACE, no hard links).
var errNoExclusive = errors.New("no exclusive rename here")

// linkNew is publishNew by a hard link, which fails where the name is
// taken, and the temp name's removal.
func linkNew(temp, path string) error {
	err := os.Link(temp, path)
	switch {
	case err == nil:
		_ = os.Remove(temp) // left, it is a second name a Lock's sweep removes
		return nil
	case errors.Is(err, fs.ErrExist):
		return err
	}
	return errNoExclusive // FAT, some FUSE: EPERM, ENOTSUP...
}

// checkHolds returns a *ConflictError unless the file at path holds what
// was expected.
func checkHolds(path string, expected *held) error {
	ok, err := expected.in(path)
	if err == nil && !ok {
		var found Stamp
		if found, err = readStamp(path); err == nil {
			ce := &ConflictError{Path: path, Expected: expected.Stamp(), Found: found}
			if expected.none() {
				ce.There = occupantOfNew(path)
			}
			if now, err := os.Stat(path); err == nil && expected.file != nil {
				ce.Replaced = !os.SameFile(now, expected.file)
			}
			return ce
		}
	}
	if err != nil {
		return fmt.Errorf("write notebook %s: check that it is unchanged: %w", trustdir.Shown(path), trustdir.ShownError(err))
	}
	return nil
}

// CheckWritable reports whether WriteFile could write path now, without
// changing it: path is a regular file with a write bit or does not exist,
// and a temp file can be made beside it. A command that runs for long
// before it writes (nb run) calls it first, so a target it cannot write
// fails before the work, not after it.
func CheckWritable(path string) error {
	path, _, _, err := writableTarget(path)
	if err != nil {
		return err
	}
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	release := holdMark(f) // marked until removed, as a save's
	defer release()
	f.Close()
	if tempClosed != nil {
		tempClosed(f.Name())
	}
	if err := os.Remove(f.Name()); err != nil {
		return writeError(path, err)
	}
	return nil
}

// writableTarget resolves a symlink to the file it names (a dangling
// one's is created where it points, as "> link" does, not over the link;
// resolveLinks refuses one planted in /tmp) and refuses what WriteFile
// would not replace; perm is the mode the new file gets, orig the file it
// replaces (nil: none).
func writableTarget(path string) (string, fs.FileMode, fs.FileInfo, error) {
	if path != "" && os.IsPathSeparator(path[len(path)-1]) {
		return "", 0, nil, fmt.Errorf("write notebook %s: the path names a directory, not a notebook file; give the file's name (DIR/NAME.ipynb)", trustdir.Shown(path))
	}
	target, err := resolveLinks(path)
	if err != nil {
		return "", 0, nil, writeError(path, err)
	}
	if err := linkIntoNothing(path, target); err != nil {
		return "", 0, nil, err
	}
	if target != absolute(path) {
		path = target
	}
	st, statErr := os.Stat(path)
	if statErr != nil {
		return path, newFilePerm(), nil, nil
	}
	if !st.Mode().IsRegular() {
		return "", 0, nil, fmt.Errorf("write notebook %s: %w", trustdir.Shown(path), &NotRegularError{Mode: st.Mode().Type(), Write: true})
	}
	perm := st.Mode().Perm()
	if perm&0o222 == 0 {
		return "", 0, nil, fmt.Errorf("write notebook %s: the file is read-only (mode %04o); make it writable (chmod u+w) to change it", trustdir.Shown(path), perm)
	}
	return path, perm, st, nil
}

// newFilePerm is the mode open(2) gives a new file: 0666 less the umask
// (a user's 077 keeps the outputs from other users, a 002 shares them with
// the group).
func newFilePerm() fs.FileMode {
	return fs.FileMode(0o666 &^ umask())
}

// tempCreated, when set (by a test), is called with a save's temp file
// just made: a test's writer blocks there to be killed mid-save.
// tempClosed is called once it is closed, before its rename (or, in
// CheckWritable, its removal).
var tempCreated, tempClosed func(name string)

// beforePublish, when set (by a test), is called with a save's target
// after its check, just before the temp file takes its place: another
// program may make the file then.
var beforePublish func(path string)

// createTemp makes the temp file that is renamed over path, marked as
// being written (markWriting). A Lock's sweep may take a new file before
// its mark; then another is made, as many times as a few sweeps could.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for range 10 {
		f, err := os.CreateTemp(dir, tempPattern(base))
		if err != nil {
			return nil, writeError(path, err)
		}
		if markWriting(f) {
			return f, nil
		}
		f.Close() // the sweep that took it removes it
	}
	return nil, fmt.Errorf("write notebook %s: its temp files in %s were removed as soon as they were made, ten times", trustdir.Shown(path), trustdir.Shown(dir))
}

// syncDir makes the rename durable; file systems that cannot fsync a
// directory still have the new file, so its error is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
