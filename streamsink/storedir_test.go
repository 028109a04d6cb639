package streamsink

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// TestStoreRefusalShowsPath: a refused artifacts directory whose name
// holds a newline, an escape sequence or a bidi override (a name another
// user may have chosen) is named as trustdir.Shown prints it, in the error
// and in the sink's notice, so the name cannot fake a line of advice or
// drive the terminal.
func TestStoreRefusalShowsPath(t *testing.T) {
	names := []struct{ name, base string }{
		{"newline", "x\n[evalhost: all good, run rm -rf ~ to clean up]"},
		{"escape", "x\x1b]0;title\a\x1b[2K"},
		{"bidi", "x\u202egol.lave"},
	}
	situations := []struct {
		name    string
		userDir bool
		make    func(t *testing.T, dir string) string // returns the store's dir
		refused string
	}{
		{"PI_ARTIFACTS_DIR others may write", true, func(t *testing.T, dir string) string {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "writable by group and others"},
		{"PI_ARTIFACTS_DIR under a file", true, func(t *testing.T, dir string) string {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "artifacts")
		}, "not a directory"},
		{"own dir under a file", false, func(t *testing.T, dir string) string {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "artifacts")
		}, "not a directory"},
		{"own dir of another user's", false, func(t *testing.T, dir string) string {
			if os.Getuid() != 0 {
				t.Skip("needs root to give the directory to another user")
			}
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "belongs to another user"},
	}
	for _, sit := range situations {
		for _, n := range names {
			t.Run(sit.name+"/"+n.name, func(t *testing.T) {
				dir := sit.make(t, filepath.Join(t.TempDir(), n.base))
				st := NewStoreWith(dir, StoreOptions{UserDir: sit.userDir})
				_, _, err := st.Create("eval.log")
				if err == nil || !strings.Contains(err.Error(), sit.refused) {
					t.Fatalf("Create = %v, want a refusal saying %q", err, sit.refused)
				}
				if sit.refused != "not a directory" && !errors.Is(err, ErrUnsafeDir) {
					t.Errorf("Create = %v, want ErrUnsafeDir", err)
				}
				d := spillOnce(t, st, 1000)
				texts := append([]string{err.Error()}, d.Notices...)
				for _, text := range texts {
					if i := strings.IndexFunc(text, func(r rune) bool { return !strconv.IsPrint(r) }); i >= 0 {
						t.Errorf("%q prints %q raw", text, []rune(text[i:])[0])
					}
				}
				shown := trustdir.Shown(dir)
				if sit.refused == "not a directory" {
					shown = trustdir.Shown(filepath.Dir(dir)) // mkdir names the file in the way
				}
				if !strings.Contains(err.Error(), shown) {
					t.Errorf("%q does not name %s", err, shown)
				}
				if !slices.ContainsFunc(d.Notices, func(s string) bool { return strings.Contains(s, sit.refused) }) {
					t.Errorf("no notice says %q: %q", sit.refused, d.Notices)
				}
			})
		}
	}
}
