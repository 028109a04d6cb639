package notebook

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
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

// A notebook past maxHeldBytes keeps no buffer of its file's size (its
// bytes, its cells' cache, a spare): its saves stream their encoding
// (spillBytes at a time: the cells here are bigger), still write fresh
// encodings, and an edit made meanwhile by another program is still a
// conflict.
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
		if err := nb.Edit(step%3, strings.Repeat("y = 2\n", 100+step)+strings.Repeat("z", 3*spillBytes)); err != nil {
			t.Fatal(err)
		}
		save := nb.SaveUnsynced
		if step == 3 {
			save = nb.Save
		}
		if err := save(path); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if nb.held.haveData || nb.cache.buf != nil || nb.free != nil {
			t.Fatalf("step %d: a notebook past maxHeldBytes holds its file's bytes, its cells' text or a spare buffer", step)
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

// A save of a notebook whose new outputs make it big streams its
// encoding at once, before any save made it big: it allocates about the
// spill buffer, not a buffer of the file's size (a 300 MB output's first
// save allocated 340 MB, and the run peaked at 1.5 GB resident; 420 MB
// streamed).
func TestSaveStreamsNewBigOutputs(t *testing.T) {
	defer func(n int) { maxHeldBytes = n }(maxHeldBytes)
	maxHeldBytes = 1 << 20
	nb := New()
	if err := nb.Insert(0, Code, "print('y' * 99)"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.ipynb")
	if err := nb.SaveUnsynced(path); err != nil { // small: kept as the cache
		t.Fatal(err)
	}
	const size = 8 << 20
	if err := nb.SetOutputs(0, []Output{StreamOutput("stdout", strings.Repeat(strings.Repeat("y", 99)+"\n", size/100))}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := nb.SaveUnsynced(path); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*spillBytes {
		t.Errorf("saving %d MiB of new outputs allocated %d KiB; want the spill buffer's %d KiB or so", size>>20, got>>10, spillBytes>>10)
	}
	if nb.cache.buf != nil || nb.free != nil || nb.held.haveData {
		t.Errorf("the notebook kept a buffer of its file after a streamed save")
	}
	if got := readFile(t, path); !bytes.Equal(got, uncachedBytes(nb)) {
		t.Fatalf("streamed file is not the notebook's encoding (%d bytes)", len(got))
	}
}
