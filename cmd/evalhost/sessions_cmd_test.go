package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A sessions table cell reads as one value: text that is blank, holds
// white space or is not printable is quoted.
func TestTableCell(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "s1", "s1"},
		{"a path", "/home/u/proj", "/home/u/proj"},
		{"blank", " ", `" "`},
		{"empty", "", `""`},
		{"a space inside", "a b", `"a b"`},
		{"a path with a space", "/home/u/my proj", `"/home/u/my proj"`},
		{"a tab", "a\tb", `"a\tb"`},
		{"an escape", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"unicode", "café", "café"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tableCell(tc.in); got != tc.want {
				t.Errorf("tableCell(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestSessionDir: a session's directory is its path with the links on
// the way resolved, so one directory is one key however it was reached;
// a path that no longer exists keeps its missing part, below what of it
// resolves.
func TestSessionDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"link": "real", "link2": "link", "up": "real/sub/..", "gone": "nothing"} {
		if err := os.Symlink(to, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ name, path, want string }{
		{"plain", real, real},
		{"a link", filepath.Join(base, "link"), real},
		{"a link to a link", filepath.Join(base, "link2", "sub"), filepath.Join(real, "sub")},
		{"a link with ..", filepath.Join(base, "up"), real},
		{"removed, under a link", filepath.Join(base, "link", "removed", "deeper"), filepath.Join(real, "removed", "deeper")},
		{"a dangling link", filepath.Join(base, "gone"), filepath.Join(base, "gone")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessionDir(tt.path); got != tt.want {
				t.Fatalf("sessionDir(%s) = %s, want %s", tt.path, got, tt.want)
			}
		})
	}
}
