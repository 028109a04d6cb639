//go:build unix

package trustdir

import (
	"io/fs"
	"os"
	"syscall"
)

// Owner returns the uid owning fi's file; ok is false where the file info
// carries none.
func Owner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}

// IDOf returns the device and inode of fi's file. The device is converted
// as C converts dev_t to an unsigned 64-bit number (sign-extended where it
// is signed, as on macOS), which is how Python's os.stat reports it too.
func IDOf(fi fs.FileInfo) (ID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ID{}, false
	}
	return ID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, true
}

// openNoBlock opens path for reading without blocking on a fifo put in its
// place.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
