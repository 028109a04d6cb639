package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// writeNotebook makes a notebook with the real nbformat package.
func writeNotebook(t testing.TB, path string, cells ...string) {
	t.Helper()
	script := testkit.NbformatPrelude + `
import json, sys, nbformat
nb = nbformat.v4.new_notebook()
for kind, src in json.loads(sys.argv[2]):
    nb.cells.append(nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src))
nbformat.write(nb, sys.argv[1])
`
	var pairs [][2]string
	for _, c := range cells {
		if md, ok := strings.CutPrefix(c, "md:"); ok {
			pairs = append(pairs, [2]string{"md", md})
		} else {
			pairs = append(pairs, [2]string{"code", c})
		}
	}
	arg, _ := json.Marshal(pairs)
	if out, err := exec.Command("python3", "-c", script, path, string(arg)).CombinedOutput(); err != nil {
		t.Skipf("nbformat not available: %v %s", err, out)
	}
}

type nbOutput struct {
	OutputType string          `json:"output_type"`
	Name       string          `json:"name"`
	Text       json.RawMessage `json:"text"`
	Data       map[string]any  `json:"data"`
	Ename      string          `json:"ename"`
}

type nbCell struct {
	CellType       string     `json:"cell_type"`
	ExecutionCount *int       `json:"execution_count"`
	Outputs        []nbOutput `json:"outputs"`
}

func readNotebook(t *testing.T, path string) []nbCell {
	t.Helper()
	if out, err := exec.Command("python3", "-c", testkit.NbformatPrelude+"import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))", path).CombinedOutput(); err != nil {
		t.Fatalf("%s does not validate with nbformat: %v\n%s", path, err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct{ Cells []nbCell }
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatal(err)
	}
	return nb.Cells
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	json.Unmarshal(raw, &lines)
	return strings.Join(lines, "")
}

func TestNotebookRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ipynb")
	writeNotebook(t, in,
		"md:# Title",
		"x = 41\nprint('hello')",
		"x + 1",
		"class T:\n    def _repr_html_(self): return '<b>hi</b>'\n    def __repr__(self): return 'T()'\ndisplay(T())",
		"print('partial', flush=True)\nwhile True: pass",
		"print('never')")
	before, _ := os.ReadFile(in)
	out := filepath.Join(dir, "out.ipynb")
	cmd := command(t, "nb", "run", in, "-o", out, "--timeout", "1")
	output, err := cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 124 {
		t.Fatalf("nb run: %v (want exit 124 for the timed-out cell)\n%s", err, output)
	}
	if after, _ := os.ReadFile(in); string(after) != string(before) {
		t.Fatalf("nb run -o changed its input")
	}
	cells := readNotebook(t, out)
	if len(cells[0].Outputs) != 0 || cells[0].CellType != "markdown" {
		t.Errorf("markdown cell touched: %+v", cells[0])
	}
	if c := cells[1]; *c.ExecutionCount != 1 || len(c.Outputs) != 1 || c.Outputs[0].Name != "stdout" || text(c.Outputs[0].Text) != "hello\n" {
		t.Errorf("print cell: %+v", c)
	}
	if c := cells[2]; *c.ExecutionCount != 2 || c.Outputs[0].OutputType != "execute_result" || dataText(c.Outputs[0].Data["text/plain"]) != "42" {
		t.Errorf("result cell: %+v", c)
	}
	if c := cells[3]; c.Outputs[0].OutputType != "display_data" || dataText(c.Outputs[0].Data["text/html"]) != "<b>hi</b>" {
		t.Errorf("display cell: %+v", c)
	}
	c := cells[4]
	if len(c.Outputs) < 2 || text(c.Outputs[0].Text) != "partial\n" || errorNames(c) != "KeyboardInterrupt" {
		t.Errorf("timed-out cell should keep its partial output and one error output, its KeyboardInterrupt, as papermill's: %+v", c)
	}
	if c := cells[5]; len(c.Outputs) != 0 || c.ExecutionCount != nil {
		t.Errorf("cell after the failure ran: %+v", c)
	}
}

func TestNotebookRunInplaceAllowErrors(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.ipynb")
	writeNotebook(t, nb, "1/0", "print('after')")
	if out, err := command(t, "nb", "run", nb, "--inplace", "--allow-errors").CombinedOutput(); err == nil {
		t.Fatalf("a failing cell should exit non-zero\n%s", out)
	}
	cells := readNotebook(t, nb)
	if cells[0].Outputs[0].Ename != "ZeroDivisionError" || text(cells[1].Outputs[0].Text) != "after\n" {
		t.Fatalf("allow-errors run: %+v", cells)
	}
}

// errorNames lists the enames of c's error outputs, comma-separated.
func errorNames(c nbCell) string {
	var names []string
	for _, o := range c.Outputs {
		if o.OutputType == "error" {
			names = append(names, o.Ename)
		}
	}
	return strings.Join(names, ",")
}

// dataText joins an nbformat multiline string (a string or a list of lines).
func dataText(v any) string {
	raw, _ := json.Marshal(v)
	return text(raw)
}

// TestNotebookRunKeepsChangesMadeWhileRunning: a notebook changed on disk
// while its cells run (here by the cell itself, standing in for an edit or
// another run) is not overwritten; the executed notebook goes next to it.
func TestNotebookRunKeepsChangesMadeWhileRunning(t *testing.T) {
	tests := []struct {
		name string
		args func(nb string) []string
	}{
		{"inplace", func(nb string) []string { return []string{"--inplace"} }},
		{"output is the input", func(nb string) []string { return []string{"-o", nb} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			nb := filepath.Join(dir, "nb.ipynb")
			// Appending a space keeps the JSON valid and stands for an edit.
			writeNotebook(t, nb, "with open('nb.ipynb', 'a') as f:\n    f.write(' ')\nprint('ran')")
			edited, _ := os.ReadFile(nb)
			edited = append(edited, ' ')
			output, err := command(t, append([]string{"nb", "run", nb}, tt.args(nb)...)...).CombinedOutput()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.Contains(string(output), "changed on disk while its cells ran") {
				t.Fatalf("nb run: %v, want exit 1 saying the notebook changed\n%s", err, output)
			}
			if now, _ := os.ReadFile(nb); string(now) != string(edited) {
				t.Errorf("the change made during the run was overwritten")
			}
			cells := readNotebook(t, filepath.Join(dir, "nb.nbconvert.ipynb"))
			if text(cells[0].Outputs[0].Text) != "ran\n" {
				t.Errorf("executed notebook: %+v", cells)
			}
		})
	}
}

// TestNotebookConcurrentEditsLoseNothing: evalhost processes editing one
// notebook at once (issue 19 item 7: two inserts both exited 0 and one cell
// was gone in 8-9 rounds of 10) take turns, and every edit is in the file.
func TestNotebookConcurrentEditsLoseNothing(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.ipynb")
	const rounds, editors = 10, 4
	for round := range rounds {
		os.Remove(nb) // the first edit of each round creates the file
		cmds := make([]*exec.Cmd, editors)
		outs := make([]strings.Builder, editors)
		for i := range cmds {
			cmds[i] = command(t, "nb", "insert", nb, "--cell", "0", "--content", fmt.Sprintf("r%d e%d", round, i))
			cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("round %d: insert %d: %v\n%s", round, i, err, outs[i].String())
			}
		}
		cells := readNotebook(t, nb)
		if len(cells) != editors {
			t.Fatalf("round %d: %d cells after %d inserts: edits were lost", round, len(cells), editors)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("lock or temp files left beside the notebook: %v", left)
	}
}

// TestNotebookViewApplyKeepsWhatItShows (issue 17): a notebook with a cell
// type from a newer format, and one nbformat reads although it fails its
// validation, survive nb view | nb apply byte for byte; an edit of the
// unknown cell is refused with the file unchanged.
func TestNotebookViewApplyKeepsWhatItShows(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"future_cells.ipynb", "invalid/unknown_type_current_minor.ipynb", "invalid/missing_source.ipynb"} {
		orig, err := os.ReadFile(filepath.Join("../notebook/testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		nb := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(nb, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		view, err := command(t, "nb", "view", nb).Output()
		if err != nil {
			t.Fatalf("%s: nb view: %v", name, err)
		}
		apply := command(t, "nb", "apply", nb)
		apply.Stdin = strings.NewReader(string(view))
		if out, err := apply.CombinedOutput(); err != nil || !strings.Contains(string(out), "unchanged") {
			t.Errorf("%s: nb apply of the unchanged view: %v\n%s", name, err, out)
		}
		if now, _ := os.ReadFile(nb); string(now) != string(orig) {
			t.Errorf("%s: view | apply changed the file\n%s", name, now)
		}
	}
	nb := filepath.Join(dir, "future_cells.ipynb")
	orig, _ := os.ReadFile(nb)
	view, _ := command(t, "nb", "view", nb).Output()
	if !strings.Contains(string(view), "# %% [chart] cell:1 (read-only: a cell type evalhost does not know)\n") {
		t.Fatalf("the view does not mark the chart cell read-only:\n%s", view)
	}
	apply := command(t, "nb", "apply", nb)
	apply.Stdin = strings.NewReader(strings.Replace(string(view), "bars(x)", "bars(y)", 1))
	out, err := apply.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.Contains(string(out), `line 3: cell:1 is a "chart" cell, a type evalhost does not know, so it is read-only`) {
		t.Errorf("nb apply of an edited chart cell: %v, want exit 1 saying it is read-only\n%s", err, out)
	}
	out, err = command(t, "nb", "edit", nb, "--cell", "1", "--content", "bars(y)").CombinedOutput()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.Contains(string(out), `cell 1 is a "chart" cell`) {
		t.Errorf("nb edit of the chart cell: %v, want exit 1 saying it is read-only\n%s", err, out)
	}
	if now, _ := os.ReadFile(nb); string(now) != string(orig) {
		t.Errorf("a refused edit changed the file")
	}
}

// TestNotebookRunRefusesAnUnwritableTarget: a target nb run cannot write
// is refused before any cell runs, naming what is wrong, so no work (and
// no output) is lost after the fact.
func TestNotebookRunRefusesAnUnwritableTarget(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the extra arguments, given the notebook's directory.
		setup func(t *testing.T, dir, nb string) []string
		want  string
		root  bool // whether the case holds for root, who writes anywhere
	}{
		{"inplace on a read-only notebook", func(t *testing.T, dir, nb string) []string {
			if err := os.Chmod(nb, 0o444); err != nil {
				t.Fatal(err)
			}
			return []string{"--inplace"}
		}, "read-only", true},
		{"output into a missing directory", func(t *testing.T, dir, nb string) []string {
			return []string{"-o", filepath.Join(dir, "missing", "out.ipynb")}
		}, "does not exist: create it first", true},
		{"output onto a directory", func(t *testing.T, dir, nb string) []string {
			out := filepath.Join(dir, "out.ipynb")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{"-o", out}
		}, "it is a directory, not a notebook file", true},
		{"output into a read-only directory", func(t *testing.T, dir, nb string) []string {
			ro := filepath.Join(dir, "ro")
			if err := os.Mkdir(ro, 0o555); err != nil {
				t.Fatal(err)
			}
			return []string{"-o", filepath.Join(ro, "out.ipynb")}
		}, "not writable by you", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.root && os.Geteuid() == 0 {
				t.Skip("root writes into a read-only directory")
			}
			dir := t.TempDir()
			nb := filepath.Join(dir, "nb.ipynb")
			writeNotebook(t, nb, "open('ran', 'w').close()")
			args := tt.setup(t, dir, nb)
			output, err := command(t, append([]string{"nb", "run", nb}, args...)...).CombinedOutput()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.Contains(string(output), tt.want) ||
				!strings.Contains(string(output), "no cell was run") {
				t.Fatalf("nb run %q: %v, want exit 1 saying %q before any cell ran\n%s", args, err, tt.want, output)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Fatalf("the cell ran although its output could not be written")
			}
		})
	}
}

// MCP's notebook_run writes the notebook as nb run does: the colour stays
// in the file, while the call's result shows the text sanitised.
func TestMCPNotebookRunKeepsEscapes(t *testing.T) {
	c := startMCP(t)
	path := filepath.Join(t.TempDir(), "nb.ipynb")
	if res := c.call(t, "notebook_apply", map[string]any{"path": path, "text": "# %%\nprint('\\x1b[1mbold\\x1b[0m')\n"}); res.IsError {
		t.Fatalf("apply: %s", allText(res))
	}
	res := c.call(t, "notebook_run", map[string]any{"path": path})
	if res.IsError || strings.Contains(allText(res), "\x1b") {
		t.Fatalf("run: %s", allText(res))
	}
	if c := readNotebook(t, path)[0]; text(c.Outputs[0].Text) != "\x1b[1mbold\x1b[0m\n" {
		t.Errorf("the notebook's output is %q, want the colour kept", text(c.Outputs[0].Text))
	}
}

// nb run writes cell ids as nbformat's writer repairs them: a 4.5 notebook
// whose cells lack ids or share one comes out valid, with nothing for
// nbformat's normalize to repair; a 4.4 notebook, whose schema has no ids,
// keeps none.
func TestNotebookRunRepairsCellIDs(t *testing.T) {
	const check = testkit.NbformatPrelude + `
import json, sys
try:
    import nbformat
except ImportError:
    sys.exit(3)
raw = json.load(open(sys.argv[1], encoding="utf-8"))
changes, _ = nbformat.validator.normalize(raw)
nbformat.validate(raw)
print(changes, sum("id" in c for c in raw["cells"]))
`
	tests := []struct {
		name  string
		minor int
		ids   []string // each cell's id, "" for none
		want  string   // normalize's changes and how many cells have ids
	}{
		{"4.5 without ids", 5, []string{"", "", ""}, "0 3"},
		{"4.5 with a duplicate", 5, []string{"a", "a", "b"}, "0 3"},
		{"4.4", 4, []string{"", ""}, "0 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "out.ipynb")
			var cells []string
			for i, id := range tt.ids {
				if id != "" {
					id = fmt.Sprintf(`"id": %q, `, id)
				}
				cells = append(cells, fmt.Sprintf(`{"cell_type": "code", "execution_count": null, %s"metadata": {}, "outputs": [], "source": "print(%d)"}`, id, i))
			}
			nb := fmt.Sprintf(`{"cells": [%s], "metadata": {}, "nbformat": 4, "nbformat_minor": %d}`, strings.Join(cells, ", "), tt.minor)
			if err := os.WriteFile(in, []byte(nb), 0o644); err != nil {
				t.Fatal(err)
			}
			if output, err := command(t, "nb", "run", in, "-o", out).CombinedOutput(); err != nil {
				t.Fatalf("nb run: %v\n%s", err, output)
			}
			got, err := exec.Command("python3", "-c", check, out).CombinedOutput()
			if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 3 {
				t.Skip("nbformat is not installed")
			}
			if err != nil || strings.TrimSpace(string(got)) != tt.want {
				t.Errorf("normalize's changes and cells with ids: %v %s, want %s", err, got, tt.want)
			}
		})
	}
}
