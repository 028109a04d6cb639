package notebook

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// TestErrorsShowPaths: an error that names a notebook, its directory, its
// lock or its temp file prints a name holding an escape sequence, a
// newline or U+2028 quoted (trustdir.Shown), so a name another user chose
// cannot drive the terminal or fake a line of the message; an ordinary
// name prints as it is.
func TestErrorsShowPaths(t *testing.T) {
	const name = "n\x1b]0;x\x07\x1b[2J\nevalhost: ok\u2028.ipynb"
	tests := []struct {
		name string
		err  func(t *testing.T, dir, file string) error
		want func(dir, file string) string // what the message holds, by shown
	}{
		{"load of a missing file", func(t *testing.T, dir, file string) error {
			_, err := Load(file)
			return err
		}, func(dir, file string) string { return "cannot open " + shown(file) + ": " }},
		{"invalid JSON", func(t *testing.T, dir, file string) error {
			os.WriteFile(file, []byte("{"), 0o644)
			_, err := Load(file)
			return err
		}, func(dir, file string) string { return shown(file) + ": invalid notebook JSON" }},
		{"save to a read-only file", func(t *testing.T, dir, file string) error {
			os.WriteFile(file, nil, 0o444)
			return New().Save(file)
		}, func(dir, file string) string { return "write notebook " + shown(file) + ": the file is read-only" }},
		{"save into a missing directory", func(t *testing.T, dir, file string) error {
			return New().Save(filepath.Join(file, "nb.ipynb")) // the temp file's name has the directory's
		}, func(dir, file string) string {
			return "write notebook " + shown(filepath.Join(file, "nb.ipynb")) + ": "
		}},
		{"save over a file changed on disk", func(t *testing.T, dir, file string) error {
			if err := New().Save(file); err != nil {
				t.Fatal(err)
			}
			nb, err := Load(file)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(file, append(readFile(t, file), ' '), 0o644)
			return nb.Save(file)
		}, func(dir, file string) string { return shown(file) + " changed on disk after it was read" }},
		{"lock in a missing directory", func(t *testing.T, dir, file string) error {
			_, err := Lock(context.Background(), filepath.Join(file, "nb.ipynb"))
			return err
		}, func(dir, file string) string { return "; the directory " + shown(file) + " does not exist" }},
		{"lock held", func(t *testing.T, dir, file string) error {
			lk, err := Lock(context.Background(), file)
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			_, err = Lock(ctx, file)
			return err
		}, func(dir, file string) string {
			return shown(file) + " is being changed by another evalhost process, which holds its lock " +
				shown(filepath.Join(dir, "."+filepath.Base(file)+".evalhost-lock"))
		}},
		{"a planted link", func(t *testing.T, dir, file string) error {
			return &LinkError{Link: file, Owner: 1}
		}, func(dir, file string) string { return "will not follow the symlink " + shown(file) + ": " }},
	}
	for _, tt := range tests {
		for _, base := range []string{name, "plain.ipynb"} {
			t.Run(tt.name+"/"+strconv.Quote(base), func(t *testing.T) {
				dir := t.TempDir()
				file := filepath.Join(dir, base)
				err := tt.err(t, dir, file)
				if err == nil {
					t.Fatal("no error")
				}
				msg := err.Error()
				if i := strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
					t.Errorf("the message holds %q raw: %q", msg[i:i+1], msg)
				}
				if want := tt.want(dir, file); !strings.Contains(msg, want) {
					t.Errorf("message %q does not hold %q", msg, want)
				}
			})
		}
	}
}

// shown is trustdir.Shown as the test expects it: quoted only when not
// printable.
func shown(p string) string {
	if strings.IndexFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}
