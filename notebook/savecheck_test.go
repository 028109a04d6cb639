package notebook

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSaveNoticesAnyChange: the check before a save's rename sees any
// change to the file, of any size and anywhere in it, whether the notebook
// last read the file (checked against a Stamp) or wrote it (against the
// bytes written).
func TestSaveNoticesAnyChange(t *testing.T) {
	data := bigNotebook(t, 600)
	if len(data) < 3*64<<10 {
		t.Fatalf("want a file of several read chunks, have %d bytes", len(data))
	}
	meddles := []struct {
		name   string
		change func([]byte) []byte // nil: leave the file alone
	}{
		{"untouched", nil},
		{"first byte", func(b []byte) []byte { b[0] ^= 1; return b }},
		{"a byte past the first chunks", func(b []byte) []byte { b[len(b)-100] ^= 1; return b }},
		{"one byte shorter", func(b []byte) []byte { return b[:len(b)-1] }},
		{"one byte longer", func(b []byte) []byte { return append(b, '\n') }},
		{"emptied", func(b []byte) []byte { return b[:0] }},
	}
	for _, last := range []string{"read", "saved"} {
		for _, m := range meddles {
			t.Run(last+"/"+m.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "n.ipynb")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				nb, err := Load(path)
				if err != nil {
					t.Fatal(err)
				}
				if last == "saved" {
					nb.Edit(0, "saved once")
					if err := nb.SaveUnsynced(path); err != nil {
						t.Fatal(err)
					}
				}
				if m.change != nil {
					if err := os.WriteFile(path, m.change(readFile(t, path)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				nb.Edit(0, "saved again")
				err = nb.SaveUnsynced(path)
				if m.change == nil && err != nil {
					t.Fatalf("save over the file as it was: %v", err)
				}
				if m.change != nil && !errors.Is(err, ErrConflict) {
					t.Fatalf("save over a changed file: %v, want ErrConflict", err)
				}
			})
		}
	}
}

// The check before a save's rename reads the file at the last moment; a
// FIFO put there after the save looked at its target (a regular file then)
// must be refused, not read: a FIFO's read blocks for ever.
func TestSaveCheckRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.ipynb")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	for _, tt := range []struct {
		name  string
		check func() error
	}{
		{"against bytes", func() error { h := heldBytes([]byte("{}")); _, err := h.in(path); return err }},
		{"against a stamp", func() error { h := held{stamp: StampOf([]byte("{}"))}; _, err := h.in(path); return err }},
		{"stamping what is there", func() error { _, err := readStamp(path); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- tt.check() }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a FIFO was read as the notebook")
				}
			case <-time.After(10 * time.Second):
				// Unblock the reader so the goroutine ends.
				if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				t.Fatal("the check blocked on the FIFO")
			}
		})
	}
}
