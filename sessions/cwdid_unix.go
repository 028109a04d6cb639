//go:build unix && !linux && !darwin && !freebsd && !netbsd

package sessions

import (
	"io/fs"
	"os"
	"syscall"
)

// statCwd is stat(2) of abs for checkCwd: the directory's device and
// inode, without a birth time (DragonFly's stat has none, OpenBSD's only
// a reserved field), so only a directory made again on another inode is
// told apart.
func statCwd(abs string) (id cwdID, isDir bool, err error) {
	fi, err := os.Stat(abs)
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err // the caller names the directory
	}
	if err != nil {
		return cwdID{}, false, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = cwdID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return id, fi.IsDir(), nil
}
