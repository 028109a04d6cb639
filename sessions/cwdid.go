package sessions

// cwdID is which directory a session's cwd was when the session began:
// its device, inode and birth time. A directory removed and made again
// at the same path is another one, though the file system may give it the
// freed inode at once (ext4 does): the birth time (nanoseconds, where the
// file system keeps one) tells them apart. A session whose cwd path now
// leads to another directory is retired (retire.go). The zero cwdID is
// unknown (a platform without the call): it matches any.
type cwdID struct {
	dev, ino uint64
	birth    int64 // nanoseconds since the epoch; 0 when not kept
}

// differs says whether a and b are known to be different directories.
func (a cwdID) differs(b cwdID) bool {
	return a != cwdID{} && b != cwdID{} && a != b
}
