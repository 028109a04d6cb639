package notebook

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestWriteThroughLinkIntoMissingDirectory: a notebook path that leads
// through a symlink into a directory that does not exist is refused by
// every writer's first step, saying which link points where, which
// directory is missing and what to do (the lock's "open .x.ipynb.evalhost-lock:
// no such file or directory" named a file the user never asked for), and
// nothing is made anywhere. A dangling link into a directory that exists
// is written through (TestSaveThroughDanglingSymlink).
func TestWriteThroughLinkIntoMissingDirectory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links map[string]string // link name in the test's directory → what it reads
		path  string            // the path written, in the test's directory
		says  []string
	}{
		{"a link into a missing directory", map[string]string{"a.ipynb": "gone/x.ipynb"}, "a.ipynb",
			[]string{"a.ipynb is a symlink to gone/x.ipynb, and the directory it points into, ", "/gone, does not exist",
				"create that directory to write the notebook where the link points, or remove the link to write ", "/a.ipynb itself"}},
		{"a chain of links", map[string]string{"a.ipynb": "b.ipynb", "b.ipynb": "gone/deeper/x.ipynb"}, "a.ipynb",
			[]string{"a.ipynb is a symlink to b.ipynb, which leads to ", "/gone/deeper/x.ipynb, and the directory it points into, ", "/gone/deeper, does not exist"}},
		{"a linked directory on the way", map[string]string{"d": "gone"}, "d/x.ipynb",
			[]string{"d/x.ipynb leads through a symlink to ", "/gone/x.ipynb, and the directory it points into, ", "/gone, does not exist",
				"create that directory, or give another path"}},
	} {
		for _, w := range []struct {
			name  string
			write func(path string) error
		}{
			{"Lock", func(path string) error {
				l, err := Lock(context.Background(), path)
				if err == nil {
					l.Unlock()
				}
				return err
			}},
			{"Save", func(path string) error { return New().Save(path) }},
			{"WriteFile", func(path string) error { return WriteFile(path, New().Bytes()) }},
			{"CheckWritable", CheckWritable},
		} {
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				dir := t.TempDir()
				for l, dest := range tc.links {
					if err := os.Symlink(dest, filepath.Join(dir, l)); err != nil {
						t.Skip("no symlinks:", err)
					}
				}
				before := testkit.Tree(t, dir)
				err := w.write(filepath.Join(dir, tc.path))
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%v, want an error matching fs.ErrNotExist", err)
				}
				for _, s := range tc.says {
					if err == nil || !strings.Contains(err.Error(), s) {
						t.Errorf("%v\nwant it to say %q", err, s)
					}
				}
				if err != nil && strings.Contains(err.Error(), "evalhost-lock") {
					t.Errorf("%v\nnames the lock file", err)
				}
				if after := testkit.Tree(t, dir); !slices.Equal(after, before) {
					t.Errorf("the directory held %q, and holds %q", before, after)
				}
			})
		}
	}
}
