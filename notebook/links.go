package notebook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// ErrPlantedLink: a save (or a lock) would follow a symlink in a directory
// anyone may write to that another user owns (a *LinkError says which).
var ErrPlantedLink = errors.New("a symlink another user may have planted")

// LinkError refuses a symlink the kernel's fs.protected_symlinks would not
// let this user follow: one in a sticky, world-writable directory (/tmp)
// owned by neither this user nor the directory's owner.
type LinkError struct {
	Link  string // the symlink
	Owner int    // its owner's uid
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("will not follow the symlink %s: it belongs to uid %d, in a directory anyone may write to, "+
		"so another user may have planted it to aim the write at a file of their choosing (the kernel "+
		"refuses to follow it too where fs.protected_symlinks is on); remove it or give another path", trustdir.Shown(e.Link), e.Owner)
}

func (e *LinkError) Unwrap() error { return ErrPlantedLink }

// resolveLinks is path with every symlink in it followed, as open(2)
// follows them, a missing last part and what comes after it left as
// given (where a file would be created: a dangling link's target, as
// "> link" creates it). A link open(2) would refuse under
// fs.protected_symlinks is refused here with a *LinkError: Go's own
// resolution (filepath.EvalSymlinks) is not held to that rule, and a save
// creates the file a link names. ".." is taken after the links before it
// are followed, as the kernel takes it.
func resolveLinks(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	vol := filepath.VolumeName(abs)
	root := vol + string(filepath.Separator)
	cur, rest := root, strings.Split(abs[len(vol):], string(filepath.Separator))
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		st, err := os.Lstat(next)
		if err != nil {
			// missing (or not to be looked into): the write finds out
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 { // the kernel's limit
			return "", &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
		}
		if err := mayFollow(next, st, cur); err != nil {
			return "", err
		}
		dest, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(dest) {
			v := filepath.VolumeName(dest)
			cur, dest = v+string(filepath.Separator), dest[len(v):]
		}
		rest = append(strings.Split(dest, string(filepath.Separator)), rest...)
	}
	return cur, nil
}
