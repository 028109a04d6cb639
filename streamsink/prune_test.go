package streamsink

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestPrune(t *testing.T) {
	old := time.Now().Add(-30 * 24 * time.Hour)
	tests := []struct {
		name  string
		files map[string]bool // name -> written long ago
		want  []string        // left afterwards
	}{
		{"old artifacts go, recent stay",
			map[string]bool{"1.eval.log": true, "2.png": true, "3.eval.log": false, "4.eval.log": false},
			[]string{"3.eval.log", "4.eval.log"}},
		{"the newest id stays even when old",
			map[string]bool{"7.eval.log": true, "9.eval.log": true},
			[]string{"9.eval.log"}},
		{"files the store did not name are left alone",
			map[string]bool{"notes.txt": true, "0.eval.log": true, "x.eval.log": true, "12": true, "5.eval.log": true, "6.eval.log": false},
			[]string{"0.eval.log", "12", "6.eval.log", "notes.txt", "x.eval.log"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, isOld := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				if isOld {
					if err := os.Chtimes(p, old, old); err != nil {
						t.Fatal(err)
					}
				}
			}
			st := NewStore(dir)
			n, err := st.Prune(DefaultRetention)
			if err != nil {
				t.Fatal(err)
			}
			ents, _ := os.ReadDir(dir)
			var left []string
			for _, e := range ents {
				left = append(left, e.Name())
			}
			slices.Sort(left)
			if !slices.Equal(left, tt.want) || n != len(tt.files)-len(tt.want) {
				t.Fatalf("left %q (removed %d), want %q", left, n, tt.want)
			}
			// New ids continue after the newest, never reusing a pruned one.
			f, id, err := st.Create("eval.log")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if seq, _ := artifactSeq(id); slices.ContainsFunc(fileNames(tt.files), func(name string) bool { s, ok := artifactSeq(name); return ok && s >= seq }) {
				t.Errorf("new artifact %s reuses or precedes an earlier id", id)
			}
		})
	}
	if n, err := NewStore(filepath.Join(t.TempDir(), "missing")).Prune(time.Hour); n != 0 || err != nil {
		t.Errorf("missing directory: %d, %v", n, err)
	}
}

func fileNames(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
