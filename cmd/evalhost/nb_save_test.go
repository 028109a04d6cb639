package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteUnsynced: the per-cell write keeps the file's mode, writes
// through a symlink, refuses a read-only file and leaves no temp file.
func TestWriteUnsynced(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the path to write
		wantErr string
		mode    os.FileMode
	}{
		{"new file", func(t *testing.T, dir string) string { return filepath.Join(dir, "nb.ipynb") }, "", 0o644},
		{"mode kept", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "nb.ipynb")
			os.WriteFile(p, []byte("old"), 0o600)
			return p
		}, "", 0o600},
		{"through a symlink", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "real.ipynb")
			os.WriteFile(p, []byte("old"), 0o640)
			link := filepath.Join(dir, "link.ipynb")
			os.Symlink(p, link)
			return link
		}, "", 0o640},
		{"read-only refused", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "nb.ipynb")
			os.WriteFile(p, []byte("old"), 0o444)
			return p
		}, "not a writable regular file", 0o444},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			err := writeUnsynced(path, []byte("new"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tt.mode {
				t.Errorf("mode %04o, want %04o", st.Mode().Perm(), tt.mode)
			}
			data, _ := os.ReadFile(path)
			if want := map[bool]string{true: "old", false: "new"}[tt.wantErr != ""]; string(data) != want {
				t.Errorf("content %q, want %q", data, want)
			}
			if fi, err := os.Lstat(path); err == nil && tt.name == "through a symlink" && fi.Mode()&os.ModeSymlink == 0 {
				t.Error("the symlink was replaced by a file")
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("temp file %s left behind", e.Name())
				}
			}
		})
	}
}
