package tests

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestNotebookWritesThroughDanglingLinks: a notebook path or -o that is a
// dangling symlink is written through, its target created where it points,
// as a shell's "> link" creates it, and the link kept; one that points
// into a directory that does not exist is refused before anything is
// read or run, saying so and what to do, with nothing made anywhere (the
// refusal named the lock file, ".x.ipynb.evalhost-lock", which the user
// never asked for).
func TestNotebookWritesThroughDanglingLinks(t *testing.T) {
	const refusal = "out.ipynb is a symlink to gone/x.ipynb, and the directory it points into, "
	for _, tc := range []struct {
		name   string
		into   string // the directory the link points into, made or not
		args   []string
		code   int
		says   []string
		target bool // whether the link's target is written
	}{
		{"apply into a missing directory", "", []string{"apply", "out.ipynb", "--text-file", "cells.txt"}, 1,
			[]string{refusal, "/gone, does not exist: create that directory to write the notebook where the link points, or remove the link to write out.ipynb itself"}, false},
		{"edit into a missing directory", "", []string{"edit", "out.ipynb", "--cell", "0", "--content", "x"}, 1,
			[]string{refusal}, false},
		{"run -o into a missing directory", "", []string{"run", "in.ipynb", "-o", "out.ipynb"}, 1,
			[]string{refusal, "; no cell was run"}, false},
		{"apply into a directory that exists", "gone", []string{"apply", "out.ipynb", "--text-file", "cells.txt"}, 0,
			[]string{"created out.ipynb (1 cell)"}, true},
		{"run -o into a directory that exists", "gone", []string{"run", "in.ipynb", "-o", "out.ipynb"}, 0,
			[]string{"wrote out.ipynb"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeNotebook(t, filepath.Join(dir, "in.ipynb"), "open('ran', 'w').close()")
			if err := os.WriteFile(filepath.Join(dir, "cells.txt"), []byte("# %%\nx = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("gone/x.ipynb", filepath.Join(dir, "out.ipynb")); err != nil {
				t.Fatal(err)
			}
			if tc.into != "" {
				if err := os.Mkdir(filepath.Join(dir, tc.into), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			before := testkit.Tree(t, dir)
			cmd := command(t, append([]string{"nb"}, tc.args...)...)
			cmd.Dir = dir
			out, _, code := runCaptured(t, cmd, true)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("output does not say %q\n%s", s, out)
				}
			}
			if st, err := os.Lstat(filepath.Join(dir, "out.ipynb")); err != nil || st.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v", err)
			}
			_, err := os.Stat(filepath.Join(dir, "gone", "x.ipynb"))
			if written := err == nil; written != tc.target {
				t.Errorf("the link's target written: %v, want %v", written, tc.target)
			}
			if !tc.target {
				if after := testkit.Tree(t, dir); !slices.Equal(after, before) {
					t.Errorf("the directory held %q, and holds %q", before, after)
				}
			}
		})
	}
}
