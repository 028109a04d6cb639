//go:build darwin || freebsd || netbsd

package sessions

import (
	"io/fs"
	"os"
	"syscall"
)

// statCwd is stat(2) of abs for checkCwd, with the directory's birth time.
func statCwd(abs string) (id cwdID, isDir bool, err error) {
	fi, err := os.Stat(abs)
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err // the caller names the directory
	}
	if err != nil {
		return cwdID{}, false, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = cwdID{dev: uint64(st.Dev), ino: uint64(st.Ino), birth: st.Birthtimespec.Nano()}
	}
	return id, fi.IsDir(), nil
}
