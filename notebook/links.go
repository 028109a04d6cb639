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

// LinkDirError refuses a write whose path leads through a symlink into a
// directory that does not exist: the file would be created where the link
// points, and there is nowhere there. A dangling link into a directory
// that exists is written through (its target created, as "> link" does).
// It matches fs.ErrNotExist.
type LinkDirError struct {
	Path   string // as given
	Link   string // what Path reads as when it is a symlink itself; "" when the link is on the way
	Target string // where the links lead, absolute
}

func (e *LinkDirError) Error() string {
	dir := trustdir.Shown(filepath.Dir(e.Target))
	if e.Link == "" {
		return fmt.Sprintf("notebook %s leads through a symlink to %s, and the directory it points into, %s, does not exist: "+
			"create that directory, or give another path", trustdir.Shown(e.Path), trustdir.Shown(e.Target), dir)
	}
	to, direct := trustdir.Shown(e.Link), e.Link
	if !filepath.IsAbs(direct) {
		direct = filepath.Join(filepath.Dir(absolute(e.Path)), direct)
	}
	if filepath.Clean(direct) != e.Target { // a chain, or links on the way
		to += ", which leads to " + trustdir.Shown(e.Target)
	}
	return fmt.Sprintf("notebook %s is a symlink to %s, and the directory it points into, %s, does not exist: "+
		"create that directory to write the notebook where the link points, or remove the link to write %s itself",
		trustdir.Shown(e.Path), to, dir, trustdir.Shown(e.Path))
}

func (e *LinkDirError) Unwrap() error { return fs.ErrNotExist }

// linkIntoNothing is a *LinkDirError when path, whose links lead to
// target (resolveLinks'), reaches it through a link and target's
// directory does not exist; nil otherwise. A missing directory named
// without a link is left to the write's own error, which names it.
func linkIntoNothing(path, target string) error {
	if target == absolute(path) {
		return nil
	}
	if _, err := os.Lstat(filepath.Dir(target)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	e := &LinkDirError{Path: path, Target: target}
	e.Link, _ = os.Readlink(path) // "" when the link is on the way, not path itself
	return e
}
