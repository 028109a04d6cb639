package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// maxImageNames bounds the search for a free image name.
const maxImageNames = 1000

// imageMode is an image file's mode (before the umask): images are there
// to be looked at, by viewers and pages of the user's choosing; who else
// may is the directory's to say, and the default one is private (0700).
const imageMode = 0o644

// checkImagesDir refuses an --images-dir that anyone but the user (and
// root) could plant files in or replace them in: owned by another user,
// writable by others without the sticky bit, a link of another user's, or
// under a directory another user controls (package trustdir's WriteDir).
// A missing one is judged by the directory it would be made in, and again
// once made, at the first image. Its errors print paths as trustdir.Shown
// does: a name another user chose may hold a newline or an escape.
func checkImagesDir(dir string) error {
	at := filepath.Clean(dir)
	for {
		_, err := os.Lstat(at)
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(at) == at {
			break
		}
		at = filepath.Dir(at)
	}
	_, err := trustdir.WriteDir(at)
	return imagesDirError(dir, at, err)
}

// UnsafeImagesDirError is an --images-dir (or the directory it would be
// made in, At) that is not the user's to trust.
type UnsafeImagesDirError struct {
	Dir, At string
	Err     *trustdir.Error
}

func (e *UnsafeImagesDirError) Error() string {
	what := "it"
	if e.At != filepath.Clean(e.Dir) {
		what = trustdir.Shown(e.At) + ", where it would be made,"
	}
	fix := "use a directory of your own"
	if f := e.Err.Fix(); f != "" {
		fix = "run: " + f + ", or " + fix
	}
	reason := e.Err.Reason()
	if rest, ok := strings.CutPrefix(reason, "it "); ok {
		reason = what + " " + rest
	}
	if e.Err.Problem == trustdir.Owned && e.Err.Role != trustdir.Above {
		reason += ", who could plant or replace the images (or files they point to)"
	}
	return fmt.Sprintf("--images-dir %s: %s; %s", trustdir.Shown(e.Dir), reason, fix)
}

func (e *UnsafeImagesDirError) Unwrap() error { return e.Err }

// imagesDirError says why dir may not hold images; at is where the
// problem was found (dir, or the directory it would be made in).
func imagesDirError(dir, at string, err error) error {
	var e *trustdir.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return &UnsafeImagesDirError{Dir: dir, At: at, Err: e}
	}
	return fmt.Errorf("--images-dir %s: %w", trustdir.Shown(dir), trustdir.ShownError(err))
}

// imagesDir is where a renderer saves images: opened once, after it was
// judged, so every image goes into the directory judged.
type imagesDir struct {
	path string // as the user named it, for the lines that name images
	root *os.Root
}

// openImagesDir makes and opens the images directory: dir, judged as
// checkImagesDir judges it (another user may have made it since the flags
// were checked), or a new private one under the temp dir.
func openImagesDir(dir string) (*imagesDir, error) {
	real := dir
	var judged trustdir.Found
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "evalhost-images-"); err != nil {
			return nil, trustdir.ShownError(err)
		}
		real = dir
	} else {
		if err := os.MkdirAll(filepath.Clean(dir), 0o755); err != nil {
			return nil, fmt.Errorf("--images-dir %s: %w", trustdir.Shown(dir), trustdir.ShownError(err))
		}
		var err error
		if judged, err = trustdir.WriteDir(dir); err != nil {
			return nil, imagesDirError(dir, filepath.Clean(dir), err)
		}
		real = judged.Real
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, trustdir.ShownError(err)
	}
	if judged.Info != nil {
		fi, err := root.Stat(".")
		want, ok := judged.ID()
		if got, _ := trustdir.IDOf(fi); err != nil || ok && got != want {
			root.Close()
			return nil, fmt.Errorf("--images-dir %s was replaced while it was being checked", trustdir.Shown(dir))
		}
	}
	return &imagesDir{path: dir, root: root}, nil
}

// create writes data to a new file named name (say "cell1-2.png") in the
// directory, or to name with "_2", "_3"… before its extension when a file
// of that name is there: nothing there is ever overwritten or followed (a
// link another user planted there), as O_EXCL and O_NOFOLLOW make sure.
// It returns the path of the file written.
func (d *imagesDir) create(name string, data []byte) (string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for n := 1; n <= maxImageNames; n++ {
		try := name
		if n > 1 {
			try = fmt.Sprintf("%s_%d%s", stem, n, ext)
		}
		f, err := d.root.OpenFile(try, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, imageMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		path := filepath.Join(d.path, try)
		if werr != nil {
			d.root.Remove(try)
			return "", fmt.Errorf("write %s: %w", path, werr)
		}
		return path, nil
	}
	return "", fmt.Errorf("no free name for %s in %s after %d tries", name, d.path, maxImageNames)
}
