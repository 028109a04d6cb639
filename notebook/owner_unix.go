//go:build unix

package notebook

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f, the temp file that replaces orig, orig's owner and
// group, as far as this user may: root gives both (its run of a user's
// notebook leaves it the user's), another user the group when it is one of
// theirs (a shared notebook stays writable by its group). The rename makes
// a new file, which would belong to whoever saves; an in-place write, as
// nbformat.write's (papermill's), keeps them. What may not be given stays
// the saver's, as before.
func keepOwner(f *os.File, orig fs.FileInfo) {
	st, ok := orig.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	uid, gid := int(st.Uid), int(st.Gid)
	now, err := f.Stat()
	if err != nil {
		return
	}
	if cur, ok := now.Sys().(*syscall.Stat_t); ok && int(cur.Uid) == uid && int(cur.Gid) == gid {
		return // the common case: one's own file
	}
	if f.Chown(uid, gid) != nil {
		f.Chown(-1, gid)
	}
}

// fileOwner is the uid that owns the file st describes.
func fileOwner(st fs.FileInfo) (int, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}
