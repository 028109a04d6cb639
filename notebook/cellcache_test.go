package notebook

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// uncachedBytes is Bytes as it was before the cell cache: every value
// encoded afresh.
func uncachedBytes(nb *Notebook) []byte {
	e := encoder{indent: nb.layout.indent, newline: nb.layout.newline}
	e.value(nb.syncedRoot(), 0)
	if nb.layout.finalNewline {
		e.buf = append(e.buf, nb.layout.newline...)
	}
	return e.buf
}

// TestCachedEncodingMatchesFresh (property): after any sequence of edits,
// Bytes (cached cells) is byte for byte the encoding of every value afresh
// and what a fresh parse of it writes, and Save's id repair, which skips
// notebooks whose ids cannot have changed, repairs what a full check of
// every id repairs. Clones are edited and saved alongside the notebooks
// they came from, since each recycles its buffers: neither may write into
// the other's.
func TestCachedEncodingMatchesFresh(t *testing.T) {
	starts := map[string][]byte{"big": bigNotebook(t, 60)}
	for _, path := range goldenNotebooks(t) {
		starts[strings.TrimSuffix(filepath.Base(path), ".ipynb")] = readFile(t, path)
	}
	basic := string(starts["basic"])
	starts["crlf"] = []byte(strings.ReplaceAll(basic, "\n", "\r\n"))
	starts["no final newline"] = []byte(strings.TrimSuffix(basic, "\n"))
	for name, data := range starts {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 17))
				dir := t.TempDir()
				nbs := []*playedNotebook{{nb: mustParse(t, data), path: filepath.Join(dir, "0")}}
				var log []string
				for step := range 200 {
					k := r.IntN(len(nbs))
					p := nbs[k]
					next, what := randomEdit(t, r, p.nb, p.path)
					log = append(log, fmt.Sprint(k, ": ", what))
					if strings.HasPrefix(what, "save") {
						p.written = readFile(t, p.path)
					}
					if next != p.nb { // a clone, or the result of ApplyText: it saves elsewhere
						q := &playedNotebook{nb: next, path: filepath.Join(dir, fmt.Sprint(step+1)), written: p.written}
						if len(nbs) < 3 {
							nbs = append(nbs, q)
						} else {
							nbs[r.IntN(len(nbs))] = q
						}
					}
					for k, p := range nbs {
						checkEncoding(t, p, fmt.Sprintf("step %d, notebook %d, after %q", step, k, log))
					}
				}
			})
		}
	}
}

// playedNotebook is a notebook of the property test, the path it saves to,
// and what it (or the notebook it was cloned from) last saved.
type playedNotebook struct {
	nb      *Notebook
	path    string
	written []byte
}

// checkEncoding fails unless p's Bytes is its encoding afresh, which a
// fresh parse writes the same, and the bytes its next save expects are
// those it last wrote.
func checkEncoding(t *testing.T, p *playedNotebook, when string) {
	t.Helper()
	nb := p.nb
	got := nb.Bytes()
	if want := uncachedBytes(nb); !bytes.Equal(got, want) {
		t.Fatalf("%s: cached encoding differs from a fresh one\n got: %s\nwant: %s", when, got, want)
	}
	if again := mustParse(t, got).Bytes(); !bytes.Equal(again, got) {
		t.Fatalf("%s: a fresh parse writes it differently", when)
	}
	if nb.held.haveData != (p.written != nil) || !bytes.Equal(nb.held.data, p.written) {
		t.Fatalf("%s: the bytes the next save expects are not those it wrote", when)
	}
}

// randomEdit applies one random change to nb (or to its clone, which it
// returns) and says what it did. Errors (an unknown cell type, a cell
// without outputs) are part of the game: the notebook must stay the same.
func randomEdit(t *testing.T, r *rand.Rand, nb *Notebook, path string) (*Notebook, string) {
	t.Helper()
	n := nb.Len()
	i := 0
	if n > 0 {
		i = r.IntN(n)
	}
	types := []CellType{Code, Markdown, Raw}
	switch op := r.IntN(15); {
	case op == 0 && n > 0:
		nb.Edit(i, fmt.Sprintf("edit %d\nline é\r\n", r.IntN(100)))
		return nb, fmt.Sprint("edit ", i)
	case op == 1:
		i = r.IntN(n + 1)
		nb.Insert(i, types[r.IntN(3)], "new\n")
		return nb, fmt.Sprint("insert ", i)
	case op == 2 && n > 0:
		nb.Delete(i)
		return nb, fmt.Sprint("delete ", i)
	case op == 3 && n > 0:
		nb.SetOutputs(i, []Output{StreamOutput("stdout", fmt.Sprintf("out %d\n", r.IntN(9)))})
		return nb, fmt.Sprint("outputs ", i)
	case op == 4 && n > 0:
		nb.SetExecutionCount(i, r.IntN(3))
		return nb, fmt.Sprint("count ", i)
	case op == 5 && n > 0:
		nb.SetCellMetadata(i, "papermill", map[string]any{"status": "pending", "duration": r.Float64()})
		return nb, fmt.Sprint("metadata ", i)
	case op == 6 && n > 0:
		nb.DeleteCellMetadata(i, []string{"papermill", "tags", "collapsed"}[r.IntN(3)])
		return nb, fmt.Sprint("delete metadata ", i)
	case op == 7 && n > 0:
		nb.SetTags(i, []string{"t", fmt.Sprint(r.IntN(5))})
		return nb, fmt.Sprint("tags ", i)
	case op == 8:
		nb.SetMetadata("papermill", map[string]any{"n": r.IntN(9)})
		return nb, "notebook metadata"
	case op == 9:
		nb.SetLanguageInfo(PythonLanguageInfo(fmt.Sprintf("3.%d.1", r.IntN(20))))
		return nb, "language_info"
	case op == 10:
		text, what := randomTextEdit(r, nb.Text())
		if out, err := nb.ApplyText(text); err == nil {
			return out, "apply text: " + what
		}
		return nb, "apply text refused: " + what
	case op == 11:
		want := nb.clone().repairCellIDs() // a clone checks every id
		if got := nb.repairCellIDs(); got != want {
			t.Fatalf("repair changed %d ids, a full check %d", got, want)
		}
		if err := nb.Save(path); err != nil {
			t.Fatal(err)
		}
		if saved := readFile(t, path); !bytes.Equal(saved, uncachedBytes(nb)) {
			t.Fatalf("saved file differs from a fresh encoding")
		}
		return nb, "save " + filepath.Base(path)
	case op == 12 && n > 0 && cellType(nb.cells[i]).Known():
		breakID(r, nb, i)
		return nb, fmt.Sprint("break id ", i)
	case op == 13:
		return nb.clone(), "clone"
	}
	return nb, "nothing"
}

// breakID gives known cell i an id the repair must replace: another
// cell's (a duplicate), one the schema refuses, or none.
func breakID(r *rand.Rand, nb *Notebook, i int) {
	switch r.IntN(3) {
	case 0:
		if dup := nb.cells[r.IntN(nb.Len())].get("id"); dup != nil {
			nb.setCellField(i, "id", dup)
		}
	case 1:
		nb.setCellField(i, "id", newString("not valid"))
	default:
		c := nb.cells[i].shallowCopy()
		c.del("id")
		nb.cells[i] = c
	}
}

var markerLine = regexp.MustCompile(`(?m)^# %% \[([a-z]+)\]`)

// randomTextEdit changes a text view as an agent might: reverses its
// cells, changes a cell's type, drops a cell, or repeats one (whose second
// copy is a new cell).
func randomTextEdit(r *rand.Rand, text string) (string, string) {
	sections := regexp.MustCompile(`(?m)^# %%`).Split(text, -1)[1:]
	if len(sections) == 0 {
		return text + "# %% [code]\nadded\n", "add a cell"
	}
	k := r.IntN(len(sections))
	switch r.IntN(4) {
	case 0:
		return reorder(text), "reverse"
	case 1:
		types := []string{"code", "markdown", "raw"}
		sections[k] = markerLine.ReplaceAllString("# %%"+sections[k], "# %% ["+types[r.IntN(3)]+"]")[len("# %%"):]
		return "# %%" + strings.Join(sections, "# %%"), fmt.Sprint("retype ", k)
	case 2:
		sections = append(sections[:k], sections[k+1:]...)
		if len(sections) == 0 {
			return "", "drop the only cell"
		}
		return "# %%" + strings.Join(sections, "# %%"), fmt.Sprint("drop ", k)
	}
	sections = append(sections, sections[k])
	return "# %%" + strings.Join(sections, "# %%"), fmt.Sprint("repeat ", k)
}

// TestEncodeReusesUnchangedCells: after a change, only the changed cells
// are encoded; the others' text comes from the cache, also when they
// moved (past the first few, which are encoded before the cache is looked
// up by cell). A poisoned cache entry shows which.
func TestEncodeReusesUnchangedCells(t *testing.T) {
	nb := mustParse(t, bigNotebook(t, 30))
	nb.Bytes()
	const poison = `{"poisoned": 20}`
	nb.cache.entries[20].enc = []byte(poison)
	if err := nb.SetCellMetadata(3, "papermill", "changed"); err != nil {
		t.Fatal(err)
	}
	if got := string(nb.Bytes()); !strings.Contains(got, poison) || !strings.Contains(got, `"papermill": "changed"`) {
		t.Fatalf("after cell 3 changed, cell 20 was encoded again or cell 3 was not:\n%s", got)
	}
	if _, err := nb.Delete(0); err != nil { // every cell moves up one
		t.Fatal(err)
	}
	if got := string(nb.Bytes()); !strings.Contains(got, poison) {
		t.Fatalf("after a delete, moved cells were encoded again:\n%s", got)
	}
	if err := nb.Edit(19, "changed"); err != nil {
		t.Fatal(err)
	}
	if got := string(nb.Bytes()); strings.Contains(got, poison) {
		t.Fatalf("a changed cell's old text was kept:\n%s", got)
	}
}
