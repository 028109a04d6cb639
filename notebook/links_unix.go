//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"io/fs"
	"os"
	"syscall"
)

// mayFollow applies fs.protected_symlinks' rule to link (st its Lstat), in
// directory dir: in a sticky, world-writable directory only a link of
// this user's or of the directory's owner is followed.
func mayFollow(link string, st fs.FileInfo, dir string) error {
	ds, err := os.Stat(dir)
	if err != nil || ds.Mode()&fs.ModeSticky == 0 || ds.Mode().Perm()&0o002 == 0 {
		return nil
	}
	ls, ok1 := st.Sys().(*syscall.Stat_t)
	dirSt, ok2 := ds.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 || int(ls.Uid) == os.Geteuid() || ls.Uid == dirSt.Uid {
		return nil
	}
	return &LinkError{Link: link, Owner: int(ls.Uid)}
}
