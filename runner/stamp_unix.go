//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// stampName is a runner dir's record of its files as a start last found
// them intact: each one's device, inode, size, mode and change time. A start
// whose files still match it trusts the copy from one lstat per file, not a
// read of all 300 KB and a comparison with the embedded bytes, which faulted
// them into every fresh process (~0.3 ms of each start, issue 16). Nothing
// but this user (and root) can write in the dir (0700, checked on every
// start), and any write, rename over, chmod or link changes a file's
// change time or inode, which no call can set back; so a file that matches
// its line is the file that was compared.
const stampName = ".intact"

// racyWindow keeps a file changed this recently out of a stamp, as git
// keeps a "racily clean" entry out of its index's trust: file times tick
// coarsely (a jiffy), so a write in the same tick as the check would leave
// the change time as it was. The start after the window writes the stamp.
const racyWindow = 2 * time.Second

// stampHolds reports whether dir's stamp is this user's alone and every
// embedded file is still the one it records.
func stampHolds(dir string) bool {
	want, ok := readStamp(filepath.Join(dir, stampName))
	if !ok {
		return false
	}
	got, ok := stampOf(dir, time.Time{})
	return ok && got == want
}

// writeStamp records dir's files, just found intact, unless one changed
// at settled or after (Path: racyWindow ago). A failure only costs the next
// start a comparison.
func writeStamp(dir string, settled time.Time) {
	text, ok := stampOf(dir, settled)
	if !ok {
		return
	}
	_ = replaceFile(filepath.Join(dir, stampName), text)
}

// stampOf is the stamp of dir's files as they are, false when one is not a
// regular file of this user's that no one else may write, or (with a
// non-zero settled) changed after settled.
func stampOf(dir string, settled time.Time) (string, bool) {
	b := make([]byte, 0, 64*len(embeddedFiles)+32)
	b = append(b, "evalhost runner stamp 1 "...)
	b = append(b, embeddedHash...)
	b = append(b, '\n')
	me := os.Geteuid()
	for _, f := range embeddedFiles {
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(dir, f.name), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG ||
			st.Mode&0o022 != 0 || int(st.Uid) != me || st.Size != int64(len(f.data)) {
			return "", false
		}
		ctime := time.Unix(st.Ctim.Unix())
		if !settled.IsZero() && !ctime.Before(settled) {
			return "", false
		}
		b = append(b, f.name...)
		for _, n := range []uint64{uint64(st.Dev), uint64(st.Ino), uint64(st.Size), uint64(st.Mode), uint64(ctime.UnixNano())} {
			b = strconv.AppendUint(append(b, ' '), n, 10)
		}
		b = append(b, '\n')
	}
	return string(b), true
}

// readStamp reads a stamp that is a regular file of this user's no one
// else may write (readOwn), of at most 16 KB.
func readStamp(path string) (string, bool) {
	data, ok := readOwn(path, nil, func(size int64) bool { return size <= 16<<10 })
	return string(data), ok
}
