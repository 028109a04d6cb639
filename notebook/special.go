package notebook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular: a path names no regular file (a directory, FIFO, socket
// or device), refused before any read of it or save over it (a
// *NotRegularError says what it is).
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is a path that names something other than a regular
// file: what it is, and what to do, for whoever gave it. It is the cause
// in a *FileError (a read) or a save's error, which name the path.
type NotRegularError struct {
	Mode     fs.FileMode // the type of what is there: fs.ModeDir, fs.ModeNamedPipe...
	Write    bool        // it is a save's target, not a file to read
	Notebook bool        // it was to be read as a notebook (Load's, ReadFile's)
}

func (e *NotRegularError) Error() string {
	kind := kindOf(e.Mode)
	switch {
	case e.Write && e.Mode.IsDir():
		return "it is a directory, not a notebook file; give a file's name in it (DIR/NAME.ipynb)"
	case e.Notebook && e.Mode.IsDir():
		return "it is a directory, not a notebook file; give the path of a .ipynb file in it"
	case e.Write:
		// The rename would put a file where the FIFO or device was,
		// which whoever made it is not asking for.
		return "it is " + kind + ", not a regular file, which a save does not replace: remove it, or give another path"
	case e.Mode.IsDir():
		return "it is a directory, not a regular file; give the path of a file in it"
	case e.Mode&fs.ModeNamedPipe != 0:
		return "it is " + kind + ", not a regular file, and its read waits for a writer, maybe for ever; " +
			"save what it holds to a file and give that file's path"
	case e.Mode&fs.ModeSocket != 0:
		return "it is " + kind + ", not a regular file: it holds nothing to read; give a regular file's path"
	case e.Mode&fs.ModeDevice != 0:
		return "it is " + kind + ", not a regular file, and its read may wait for input or never end; " +
			"copy what you need from it into a file and give that file's path"
	}
	return "it is " + kind + ", not a regular file; give a regular file's path"
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// kindOf names the type of a file that is not a regular one.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return fmt.Sprintf("a special file (%v)", mode.Type())
}

// OpenRegular opens path to read, refusing at once what is not a regular
// file: a *FileError whose cause is a *NotRegularError (a FIFO's open or
// read waits for a writer for ever, a device's may never end, a directory
// holds no text), or the open's own error ("cannot open x: no such file or
// directory"). The open does not wait: O_NONBLOCK (a FIFO's open waits for
// a writer without it; a regular file's reads ignore it) and O_NOCTTY (a
// terminal refused does not become this process's). A socket, which
// open(2) refuses (ENXIO, macOS's EOPNOTSUPP), is said to be one.
// Load, ReadFile and a save's check read through it; cmd/evalhost too,
// for every file nb reads.
func OpenRegular(path string) (*os.File, error) {
	f, _, err := openNoWait(path, false)
	return f, err
}

// OpenInput is OpenRegular for a file only read, never saved over (a
// cell's text, a parameters file), which may also be a pipe: bash's
// <(...) names one, and cat reads it. Its open does not wait for a writer;
// with none its text is empty (a read finds the end at once), else reads
// wait for the writer's text to its end, as cat's do. It is wrong for a
// file a save will replace, whose pipe cannot be saved back. pipe says
// which it opened, from the open's own fstat of the descriptor (a caller
// refusing a pipe that gave nothing needs no stat of its own).
func OpenInput(path string) (f *os.File, pipe bool, err error) {
	f, mode, err := openNoWait(path, true)
	return f, mode&fs.ModeNamedPipe != 0, err
}

// openNoWait is OpenRegular's open, a pipe allowed too with pipes; it
// returns the type of what it opened.
func openNoWait(path string, pipes bool) (*os.File, fs.FileMode, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EOPNOTSUPP) {
			if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
				return nil, 0, &FileError{Op: "read", Path: path, Err: &NotRegularError{Mode: st.Mode().Type()}}
			}
		}
		return nil, 0, OpenError(path, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() && !(pipes && st.Mode()&fs.ModeNamedPipe != 0) {
		err = &NotRegularError{Mode: st.Mode().Type()}
	}
	if err != nil {
		f.Close()
		return nil, 0, &FileError{Op: "read", Path: path, Err: err}
	}
	return f, st.Mode().Type(), nil
}
