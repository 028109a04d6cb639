package notebook

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// refusedInvalid lists the testdata/invalid notebooks that Parse refuses, so
// that view and apply both refuse them; every other one must survive a view
// and apply byte for byte.
var refusedInvalid = map[string]string{
	"source_number":                 `field "source": want a string or an array of strings`,
	"outputs_object":                `field "outputs": is a object, want an array`,
	"unreadable_cell_metadata_list": `field "metadata": is a array, want an object`,
	"unreadable_cell_type_number":   `field "cell_type": is a number, want the string`,
}

// TestInvalidNotebooksViewApply (issue 17): a notebook that fails nbformat's
// validation but that nbformat still reads survives view → apply byte for
// byte, or is refused by Parse, which view and apply both start with.
func TestInvalidNotebooksViewApply(t *testing.T) {
	paths, err := filepath.Glob("testdata/invalid/*.ipynb")
	if err != nil || len(paths) < 20 {
		t.Fatalf("want the notebooks in testdata/invalid (run python3 gen.py in testdata): %v %v", paths, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".ipynb")
		t.Run(name, func(t *testing.T) {
			orig := readFile(t, path)
			nb, err := Parse(orig)
			want, refused := refusedInvalid[name]
			if refused {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
					t.Fatalf("Parse = %v, want it refused with %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse refused a notebook that view and apply can keep unchanged: %v", err)
			}
			out, err := nb.ApplyText(nb.Text())
			if err != nil {
				t.Fatalf("apply of the unchanged view: %v\nview:\n%s", err, nb.Text())
			}
			if got := out.Bytes(); !bytes.Equal(got, orig) {
				t.Fatalf("view → apply changed the file\n got: %s\nwant: %s", got, orig)
			}
		})
	}
}

// TestInvalidNotebooksAreReadByNbformat: the fixtures are what the issue
// names: nbformat reads each (except those named unreadable_*), and each
// fails its validation as written.
func TestInvalidNotebooksAreReadByNbformat(t *testing.T) {
	needNbformat(t)
	paths, _ := filepath.Glob("testdata/invalid/*.ipynb")
	const check = testkit.NbformatPrelude + `
import json, logging, sys, warnings, nbformat
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
for path in sys.argv[1:]:
    unreadable = "unreadable_" in path
    try:
        nbformat.read(path, as_version=4)
    except Exception as e:
        if not unreadable:
            print(path, "is not read by nbformat:", e)
        continue
    if unreadable:
        print(path, "is read by nbformat now: rename it")
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    ids = [c.get("id") for c in raw["cells"] if isinstance(c, dict) and "id" in c]
    if len(set(ids)) < len(ids):
        continue  # nbformat.validate renames duplicate ids: they are invalid
    if not list(nbformat.validator.iter_validate(raw)):
        print(path, "passes nbformat's validation")
`
	out, err := exec.Command("python3", append([]string{"-c", check}, paths...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestUnknownCellTypesAreReadOnly (issue 17): in the view of a notebook
// from a newer format, cells of unknown types may be kept, moved or
// deleted, and any other change to them is refused with a clear error.
func TestUnknownCellTypesAreReadOnly(t *testing.T) {
	orig := readFile(t, "testdata/future_cells.ipynb")
	nb := mustParse(t, orig)
	view := nb.Text()
	chart := "# %% [chart] cell:1 (read-only: a cell type evalhost does not know)\nbars(x)\n\\# %% looks like a marker\n\n"
	if !strings.Contains(view, chart) {
		t.Fatalf("view does not show the chart cell as read-only:\n%s", view)
	}
	tests := []struct {
		name  string
		edit  func(string) string
		want  string // error text; "" when the edit applies
		cells []int  // for an edit that applies: the original cells, in order
		line  int
	}{
		{"unchanged", func(s string) string { return s }, "", []int{0, 1, 2, 3, 4}, 0},
		{"note dropped from the marker", func(s string) string {
			return strings.Replace(s, "cell:1 (read-only: a cell type evalhost does not know)", "cell:1", 1)
		}, "", []int{0, 1, 2, 3, 4}, 0},
		{"deleted", func(s string) string { return strings.Replace(s, chart, "", 1) }, "", []int{0, 2, 3, 4}, 0},
		{"moved to the end", func(s string) string { return strings.Replace(s, chart, "", 1) + chart }, "", []int{0, 2, 3, 4, 1}, 0},
		{"text changed", func(s string) string { return strings.Replace(s, "bars(x)", "bars(y)", 1) },
			`cell:1 is a "chart" cell, a type evalhost does not know, so it is read-only: its text must stay as the view shows it`, nil, 3},
		{"text added to a cell without source", func(s string) string {
			return strings.Replace(s, `cell:3 (read-only: a cell type evalhost does not know)`+"\n", `cell:3`+"\nopen()\n", 1)
		}, `cell:3 is a "widget panel" cell`, nil, 9},
		{"made a code cell", func(s string) string { return strings.Replace(s, "[chart] cell:1", "[code] cell:1", 1) },
			`cell:1 is a "chart" cell, a type evalhost does not know, so it is read-only and cannot become a "code" cell`, nil, 3},
		{"code cell made unknown", func(s string) string { return strings.Replace(s, "[code] cell:2", "[chart] cell:2", 1) },
			`cell:2 is a code cell and cannot become a "chart" cell, a type evalhost does not know`, nil, 7},
		{"copied", func(s string) string { return s + chart },
			`unknown cell type "chart": want code, markdown or raw (a cell of another type read from the notebook keeps the "cell:N" its marker had)`, nil, 11},
		{"quoted type changed", func(s string) string { return strings.Replace(s, `["odd]\"name"]`, `["odd]name"]`, 1) },
			`cell:4 is a "odd]\"name" cell, a type evalhost does not know, so it is read-only and cannot become a "odd]name" cell`, nil, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := nb.ApplyText(tt.edit(view))
			if tt.want != "" {
				var te *TextError
				if !errors.As(err, &te) || !strings.Contains(err.Error(), tt.want) || te.Line != tt.line {
					t.Fatalf("ApplyText = %v, want a TextError on line %d saying %q", err, tt.line, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(tt.cells, []int{0, 1, 2, 3, 4}) && !bytes.Equal(out.Bytes(), orig) {
				t.Errorf("the notebook changed:\n%s", out.Bytes())
			}
			if out.Len() != len(tt.cells) {
				t.Fatalf("%d cells, want %d", out.Len(), len(tt.cells))
			}
			for i, from := range tt.cells {
				if out.cells[i] != nb.cells[from] {
					t.Errorf("cell %d is not original cell %d kept as it was", i, from)
				}
			}
		})
	}
	if err := nb.Edit(1, "bars(z)"); !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), `cell 1 is a "chart" cell`) {
		t.Errorf("Edit of the chart cell: %v, want ErrReadOnly", err)
	}
	if _, err := nb.Delete(3); err != nil {
		t.Errorf("Delete of an unknown cell: %v", err)
	}
	if err := nb.Insert(0, "chart", "x"); err == nil {
		t.Errorf("Insert of an unknown cell type succeeded")
	}
}
