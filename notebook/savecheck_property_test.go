package notebook

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSavesKeepWhatTheyHandOut (property): random edits, saves that
// succeed, fail (too large, no directory) or meet an outside change,
// clones and Bytes calls. After every step every Bytes result handed out is
// unchanged (encodings' buffers are recycled: none may be one), the bytes
// the next save expects are the file's, and a save writes a fresh encoding
// that Load writes back the same. TestCachedEncodingMatchesFresh does not
// look at earlier Bytes results.
func TestSavesKeepWhatTheyHandOut(t *testing.T) {
	starts := map[string][]byte{"big": bigNotebook(t, 40)}
	for _, path := range goldenNotebooks(t) {
		starts[strings.TrimSuffix(filepath.Base(path), ".ipynb")] = readFile(t, path)
	}
	for name, data := range starts {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				playSaves(t, data, seed)
			})
		}
	}
}

// handed is a Bytes result and a copy of it as it was returned.
type handed struct {
	got, copy []byte
	when      string
}

// playSaves is one run of the property from data, with a seed.
func playSaves(t *testing.T, data []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 99))
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.ipynb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	nb, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []handed
	var log []string
	for step := range 300 {
		what := ""
		switch op := r.IntN(12); op {
		case 0, 1, 2:
			next, w := randomEdit(t, r, nb, filepath.Join(dir, "other.ipynb"))
			what = w
			if next != nb && r.IntN(2) == 0 {
				nb, what = next, w+" (kept the new one)"
			}
		case 3:
			b := nb.Bytes()
			out = append(out, handed{b, bytes.Clone(b), fmt.Sprint("step ", step)})
			what = "bytes"
		case 4, 5:
			save := nb.Save
			if op == 5 {
				save = nb.SaveUnsynced
			}
			if err := save(path); err != nil {
				t.Fatalf("step %d: save: %v (log %q)", step, err, log)
			}
			file := readFile(t, path)
			if !bytes.Equal(file, uncachedBytes(nb)) {
				t.Fatalf("step %d: saved file is not a fresh encoding (log %q)", step, log)
			}
			if again, err := Load(path); err != nil || !bytes.Equal(again.Bytes(), file) {
				t.Fatalf("step %d: Load after save does not write the file back: %v", step, err)
			}
			what = "save"
		case 6:
			// Past the size Load reads back: written all the same, checked
			// as JSON only.
			old := readBackBytes
			readBackBytes = 10
			err := nb.Save(path)
			readBackBytes = old
			if err != nil {
				t.Fatalf("step %d: save past the read-back size: %v (log %q)", step, err, log)
			}
			if !bytes.Equal(readFile(t, path), uncachedBytes(nb)) {
				t.Fatalf("step %d: saved file past the read-back size is not a fresh encoding (log %q)", step, log)
			}
			what = "save past the read-back size"
		case 7:
			if err := nb.SaveUnsynced(filepath.Join(dir, "missing", "x.ipynb")); err == nil {
				t.Fatalf("step %d: a save into a missing dir worked", step)
			}
			what = "save failed (no dir)"
		case 8:
			if nb.origin != canonical(path) {
				what = "no external change (saved elsewhere last)"
				break
			}
			// Another program changes the file: the next save must refuse,
			// and after it restores the file, must work.
			before := readFile(t, path)
			changed := bytes.Clone(before)
			changed[len(changed)/2] ^= 1
			os.WriteFile(path, changed, 0o644)
			nb.Edit(0, "conflicting") // may fail: no cells
			if err := nb.SaveUnsynced(path); !errors.Is(err, ErrConflict) {
				t.Fatalf("step %d: an external change was not a conflict: %v (log %q)", step, err, log)
			}
			os.WriteFile(path, before, 0o644)
			what = "external change refused"
		case 9:
			b := nb.Bytes()
			if _, err := WriteFileIfUnchanged(filepath.Join(dir, "copy.ipynb"), b, Stamp{}); err != nil && !errors.Is(err, ErrConflict) {
				t.Fatal(err)
			}
			out = append(out, handed{b, bytes.Clone(b), fmt.Sprint("step ", step, " (written)")})
			what = "write copy"
		case 10:
			c := nb.clone()
			c.Edit(0, "in the clone")
			c.SaveUnsynced(filepath.Join(dir, "clone.ipynb"))
			what = "clone saved elsewhere"
		case 11:
			if nb.Len() > 0 {
				nb.Delete(0)
				nb.Insert(nb.Len(), Code, "moved")
			}
			what = "rotate"
		}
		log = append(log, what)
		for _, h := range out {
			if !bytes.Equal(h.got, h.copy) {
				t.Fatalf("step %d (%s): Bytes result of %s changed under the caller", step, what, h.when)
			}
		}
		if nb.origin == canonical(path) && nb.held.haveData {
			if !bytes.Equal(nb.held.data, readFile(t, path)) {
				t.Fatalf("step %d (%s): held bytes are not the file (log %q)", step, what, log)
			}
		}
		if got, want := nb.Bytes(), uncachedBytes(nb); !bytes.Equal(got, want) {
			t.Fatalf("step %d (%s): Bytes differs from a fresh encoding", step, what)
		}
	}
}
