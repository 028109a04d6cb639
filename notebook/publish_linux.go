package notebook

import (
	"errors"

	"golang.org/x/sys/unix"
)

// publishNew renames temp to path only while path is free
// (RENAME_NOREPLACE); a file system without that flag takes a hard link
// (linkNew). A taken name is an error matching fs.ErrExist.
func publishNew(temp, path string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, temp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP),
			errors.Is(err, unix.EPERM): // a seccomp filter's answer to a call it does not know
			return linkNew(temp, path)
		}
		return writeError(path, err) // EEXIST matches fs.ErrExist
	}
}
