package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/notebook"
)

// endless is an input that never ends, as /dev/zero or `yes |`.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'y'
	}
	return len(p), nil
}

// TestReadBounded: an input past its limit is refused naming the input and
// the limit; one at the limit is read. (nb's refusal of a device is
// TestReadBoundedRefusesWhatIsNoFile's.)
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	atLimit := filepath.Join(dir, "at")
	if err := os.WriteFile(atLimit, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	over := filepath.Join(dir, "over")
	if err := os.WriteFile(over, make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string // "" reads it whole
		script     bool   // run's FILE (readScript), which may be a device: nb's files may not
	}{
		{"file at the limit", atLimit, "", false},
		{"file over the limit", over, over + " is larger than 1 MiB", false},
		{"endless stdin", "-", "stdin is larger than 1 MiB", false},
		{"run's FILE /dev/zero", "/dev/zero", "/dev/zero is larger than 1 MiB", true},
		{"run's endless stdin", "-", "stdin is larger than 1 MiB", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := readBounded
			if tt.script {
				read = readScript
			}
			data, err := read(tt.path, endless{}, 1<<20)
			if tt.want == "" {
				if err != nil || len(data) != 1<<20 {
					t.Fatalf("read %d bytes, %v", len(data), err)
				}
				return
			}
			if !errors.Is(err, errTooLarge) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// "-" where a file is needed is an error that says so, never a nil read
// (nb view - and nb run - panicked).
func TestDashWhereAFileIsNeeded(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"nb view -", []string{"nb", "view", "-"}, exitFailed, "is not read here: give a file's path"},
		{"nb run -", []string{"nb", "run", "-", "-o", "out.ipynb"}, exitUsage, "is not supported"},
		{"nb run -o -", []string{"nb", "run", "in.ipynb", "-o", "-"}, exitUsage, "is not supported"},
		{"nb insert into -", []string{"nb", "insert", "-", "--cell", "0", "--content", "x"}, exitFailed, "is not read here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := dispatch(tc.args, strings.NewReader("{}"), &out, &errOut)
			if code != tc.code || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut.String(), tc.code, tc.want)
			}
		})
	}
}

// TestReadBoundedNamesTheInput: a file that cannot be read is named as the
// user gave it, with the cause, not as Go's os calls print it ("open x:
// ..."), and the error still matches the cause.
func TestReadBoundedNamesTheInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.py")
	dangling := filepath.Join(dir, "link.py")
	if err := os.Symlink("gone/x.py", dangling); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
		is               error
	}{
		{"missing file", missing, "cannot open " + missing + ": no such file or directory", os.ErrNotExist},
		{"a symlink to nothing", dangling, "cannot open " + dangling + ": it is a symlink to gone/x.py, which does not exist: point the link at the file, or remove it", os.ErrNotExist},
		{"directory", dir, "cannot read " + dir + ": it is a directory, not a regular file; give the path of a file in it", notebook.ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readBounded(tt.path, nil, 1<<20)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.is == os.ErrNotExist { // run's FILE, opened as python3 opens it, says it the same way
				if _, err := readScript(tt.path, nil, 1<<20); err == nil || err.Error() != tt.want {
					t.Fatalf("readScript: err = %v, want %q", err, tt.want)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.is)
			}
		})
	}
}

// TestReadPipedStatsOnce: readPiped of a regular file costs what
// readBounded's read of it costs: the open's own fstat says whether it is
// a pipe, and readPiped's second stat of the descriptor it had just
// checked (a fileStat allocated for each) is gone. Counted in
// allocations, which a stat makes and which the race detector adds to.
func TestReadPipedStatsOnce(t *testing.T) {
	if testkit.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	path := filepath.Join(t.TempDir(), "cells.txt")
	if err := os.WriteFile(path, []byte("# %%\nx = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	count := func(read func(string, io.Reader, int64) ([]byte, error)) float64 {
		return testing.AllocsPerRun(50, func() {
			if _, err := read(path, nil, 1<<20); err != nil {
				t.Fatal(err)
			}
		})
	}
	if piped, bounded := count(readPiped), count(readBounded); piped > bounded {
		t.Errorf("readPiped of a regular file: %v allocations, readBounded's: %v", piped, bounded)
	}
}
