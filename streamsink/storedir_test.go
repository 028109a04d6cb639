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

// TestUserDirMadeByOneMkdir: a missing $PI_ARTIFACTS_DIR is made 0700 at
// the first spill only in a directory that exists and would pass as one
// above it; nothing above it is ever made (MkdirAll made a missing parent
// too, as root /nonexistent/...), nor is it made in a directory another
// user could swap it in. The spill's notice says why.
func TestUserDirMadeByOneMkdir(t *testing.T) {
	tests := []struct {
		name    string
		root    bool                                   // needs root to give files away
		setup   func(t *testing.T, base string) string // returns PI_ARTIFACTS_DIR
		refused string                                 // "" when it is made
		absent  func(base string) string               // what must not exist after a refusal
	}{
		{"in a directory that exists", false, func(t *testing.T, base string) string { return filepath.Join(base, "artifacts") }, "", nil},
		{"in a missing directory", false, func(t *testing.T, base string) string { return filepath.Join(base, "nonexistent", "artifacts") },
			"nonexistent does not exist", func(base string) string { return filepath.Join(base, "nonexistent") }},
		{"in a link to nowhere", false, func(t *testing.T, base string) string {
			if err := os.Symlink(filepath.Join(base, "gone"), filepath.Join(base, "link")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(base, "link", "artifacts")
		}, "gone, which does not exist", func(base string) string { return filepath.Join(base, "gone") }},
		{"in one everyone may write", false, func(t *testing.T, base string) string {
			open := filepath.Join(base, "open")
			if err := os.Mkdir(open, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(open, 0o777); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(open, "artifacts")
		}, "above it is writable by everyone (mode 0777) without the sticky bit", func(base string) string { return filepath.Join(base, "open", "artifacts") }},
		{"in another user's", true, func(t *testing.T, base string) string {
			theirs := filepath.Join(base, "theirs")
			if err := os.Mkdir(theirs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(theirs, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(theirs, "artifacts")
		}, "above it is owned by uid 4242", func(base string) string { return filepath.Join(base, "theirs", "artifacts") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Getuid() != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			base := t.TempDir()
			dir := tt.setup(t, base)
			st := NewStoreWith(dir, StoreOptions{UserDir: true})
			f, _, err := st.Create("eval.log")
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("Create = %v, want %s made", err, dir)
				}
				f.Close()
				if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
					t.Fatalf("%s: %v, %v; want a 0700 directory", dir, fi, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Fatalf("Create = %v, want a refusal saying %q", err, tt.refused)
			}
			if _, err := os.Lstat(tt.absent(base)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was made: %v", tt.absent(base), err)
			}
			d := spillOnce(t, st, 1000)
			if d.ArtifactID != "" || !slices.ContainsFunc(d.Notices, func(n string) bool { return strings.Contains(n, tt.refused) }) {
				t.Errorf("a sink on a refused directory: artifact %q, notices %q", d.ArtifactID, d.Notices)
			}
		})
	}
}
