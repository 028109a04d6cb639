package notebook

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A notebook past the size Load reads back is still saved, as nbformat
// writes any size: a cell that printed 300 MB (nbclient writes such a
// file) lost every later save, its rescue copy too. The test lowers the
// limit; the file saved must be the notebook's encoding, valid JSON.
func TestSavePastReadLimit(t *testing.T) {
	defer func(n int) { readBackBytes = n }(readBackBytes)
	readBackBytes = 1 << 10
	nb := New()
	if err := nb.Insert(0, Code, "print('x' * 4096)"); err != nil {
		t.Fatal(err)
	}
	if err := nb.SetOutputs(0, []Output{StreamOutput("stdout", strings.Repeat("x", 4<<10)+"\n")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		save func(*Notebook) func(string) error
	}{
		{"Save", func(nb *Notebook) func(string) error { return nb.Save }},
		{"SaveUnsynced", func(nb *Notebook) func(string) error { return nb.SaveUnsynced }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "big.ipynb")
			if err := tc.save(nb)(path); err != nil {
				t.Fatalf("%s of a notebook over the read-back limit: %v; want it written, as nbformat writes it", tc.name, err)
			}
			got := readFile(t, path)
			if !bytes.Equal(got, nb.Bytes()) {
				t.Fatalf("%s wrote %d bytes, not the notebook's encoding (%d)", tc.name, len(got), len(nb.Bytes()))
			}
			// And a later save, checked against what this one wrote, works.
			if err := nb.SetExecutionCount(0, 1); err != nil {
				t.Fatal(err)
			}
			if err := tc.save(nb)(path); err != nil {
				t.Fatalf("second %s: %v", tc.name, err)
			}
		})
	}
}

// A notebook past maxHeldBytes keeps one buffer, not its file's bytes
// and its cells' cache: saves after edits still write fresh encodings,
// and an edit made meanwhile by another program is still a conflict.
func TestSaveBigKeepsOneBuffer(t *testing.T) {
	defer func(n int) { maxHeldBytes = n }(maxHeldBytes)
	maxHeldBytes = 1 << 10
	path := filepath.Join(t.TempDir(), "big.ipynb")
	nb := New()
	for i := range 3 {
		if err := nb.Insert(i, Code, strings.Repeat("x = 1\n", 100)); err != nil {
			t.Fatal(err)
		}
	}
	for step := range 4 {
		if err := nb.Edit(step%3, strings.Repeat("y = 2\n", 100+step)); err != nil {
			t.Fatal(err)
		}
		save := nb.SaveUnsynced
		if step == 3 {
			save = nb.Save
		}
		if err := save(path); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if nb.held.haveData || nb.cache.buf != nil {
			t.Fatalf("step %d: a notebook past maxHeldBytes holds its file's bytes or its cells' text", step)
		}
		if got := readFile(t, path); !bytes.Equal(got, uncachedBytes(nb)) {
			t.Fatalf("step %d: saved file is not a fresh encoding", step)
		}
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := nb.SaveUnsynced(path); !errors.Is(err, ErrConflict) {
		t.Fatalf("save over a file changed meanwhile = %v; want ErrConflict", err)
	}
}
