package tests

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// papermillCLI is `python3 -m papermill` (its arguments after it) with
// testkit.NbformatPrelude first.
const papermillCLI = testkit.NbformatPrelude + "import runpy; runpy.run_module('papermill', run_name='__main__', alter_sys=True)"

// `evalhost nb run` with papermill's parameter flags writes the notebook
// papermill writes: the injected cell's source, tags and place, and every
// cell's outputs (papermill installed by scripts/test-deps.sh).
func TestNotebookParametersMatchPapermill(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "papermill, ipykernel", "papermill ipykernel")
	dir := t.TempDir()
	yamlFile := filepath.Join(dir, "params.yaml")
	if err := os.WriteFile(yamlFile, []byte("regions: [north, south]\nlimits: {low: 1, high: 1.5e+3}\nwhen: 2024-07-01\nenabled: on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := []string{
		"md:# A parameterised report",
		"print('setup')",
		"tagged:alpha = 0.1\nname = 'default'\ncount = 1\nregions = []\nlimits = {}\nwhen = None\nenabled = False\nratio = 0",
		"for v in (alpha, name, count, regions, limits, when, enabled, ratio):\n    print(type(v).__name__, repr(v))",
		"alpha * count",
	}
	flags := []string{"-p", "alpha", "0.25", "-p", "count", "3", "-r", "name", "it's \"quoted\" é", "-f", yamlFile, "-y", "ratio: .5\ncount: 2", "-p", "ratio", "1e-7"}
	tests := []struct {
		name  string
		cells []string
	}{
		{"after the parameters cell", body},
		{"at the top without one", []string{"x = 1", "print(x)"}},
		{"replacing an injected cell", append([]string{"injected:# Parameters\nalpha = 9\n"}, body...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".ipynb")
			writeTaggedNotebook(t, in, tt.cells...)
			ours := strings.TrimSuffix(in, ".ipynb") + ".ours.ipynb"
			args := append([]string{"nb", "run", in, "-o", ours}, flags...)
			if out, err := command(t, args...).CombinedOutput(); err != nil {
				t.Fatalf("nb run: %v\n%s", err, out)
			}
			theirs := strings.TrimSuffix(in, ".ipynb") + ".papermill.ipynb"
			cmp := exec.Command("python3", append([]string{"testdata/compare_papermill.py", in, ours, theirs}, flags...)...)
			if out, err := cmp.CombinedOutput(); err != nil {
				t.Fatalf("differs from papermill's: %v\n%s", err, out)
			}
		})
	}
}

// A run that fails writes what papermill writes: the failed cell's output
// and metadata (status failed, exception true), the run's exception, the
// cell after it pending. Through the gateway backend, so that the
// traceback is ipykernel's as papermill's is.
func TestNotebookFailedRunMatchesPapermill(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "papermill, ipykernel, kernel_gateway", "papermill ipykernel jupyter_kernel_gateway")
	dir := t.TempDir()
	in, ours := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "ours.ipynb")
	writeTaggedNotebook(t, in, "md:# Report", "print('one')", "def f():\n    return 1/0\nf()", "print('never')")
	cmd := command(t, "nb", "run", in, "-o", ours, "--backend", "gateway", "--papermill-metadata", "on")
	t.Cleanup(func() {
		stop := exec.Command(binary, "gateway", "stop")
		stop.Env = cmd.Env
		stop.Run()
	})
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("nb run: want exit 1 for the failing cell\n%s", out)
	}
	cmp := exec.Command("python3", "testdata/compare_papermill.py", in, ours, filepath.Join(dir, "papermill.ipynb"))
	if out, err := cmp.CombinedOutput(); err != nil {
		t.Fatalf("differs from papermill's: %v\n%s", err, out)
	}
}

// nb run --cells on a notebook papermill ran, and failed, leaves the cells
// it does not run pending, as papermill's start leaves every cell: none
// still says "failed", exception true, under a run whose exception is
// null; nor "completed", which this run did not pass.
func TestNotebookRunCellsAfterPapermill(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "papermill, ipykernel", "papermill ipykernel")
	dir := t.TempDir()
	in, nb := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "out.ipynb")
	writeTaggedNotebook(t, in, "md:# Report", "print('one')", "1/0", "print('three')")
	if out, err := exec.Command("python3", "-c", papermillCLI, in, nb).CombinedOutput(); err == nil {
		t.Fatalf("papermill: want a failure at 1/0\n%s", out)
	}
	// papermill added two markdown cells that mark the error: the code
	// cells are 2, 4 (failed) and 5 (pending).
	if out, err := command(t, "nb", "run", nb, "--inplace", "--cells", "5").CombinedOutput(); err != nil {
		t.Fatalf("nb run --cells 5: %v\n%s", err, out)
	}
	got := readRawNotebook(t, nb)
	if !strings.Contains(string(got.Metadata["papermill"]), `"exception": null`) {
		t.Errorf("the run's exception is not null: %s", got.Metadata["papermill"])
	}
	const pending = `{"duration":null,"end_time":null,"exception":null,"start_time":null,"status":"pending"}`
	for i, want := range []string{pending, pending, pending, pending, pending, `"status":"completed"`} {
		var m any
		json.Unmarshal(got.Cells[i].Metadata["papermill"], &m)
		canon, _ := json.Marshal(m)
		if !strings.Contains(string(canon), want) {
			t.Errorf("cell %d (%s): metadata.papermill %s, want %s", i, got.Cells[i].CellType, canon, want)
		}
	}
}

// nb run writes papermill's metadata for a papermill-style run (with
// parameters) or a notebook that already has it, and otherwise writes what
// nbconvert --execute writes: a notebook kept in git gains no timestamps
// or paths. --papermill-metadata decides otherwise.
func TestNotebookPapermillMetadataWhenWanted(t *testing.T) {
	const noted = "which the notebook has from an earlier run; --papermill-metadata off removes it"
	tests := []struct {
		name     string
		existing string // the input's metadata.papermill, if any; an object goes on its code cells too
		flags    []string
		want     bool // this run wrote it
		note     bool // and said why
	}{
		{"a plain run writes none, as nbconvert", "", nil, false, false},
		{"parameters given", "", []string{"-p", "x", "1"}, true, false},
		{"the notebook already has it, which is said", `{"parameters": {"x": 2}}`, nil, true, true},
		{"papermill recorded a NaN parameter", `{"parameters": {"x": NaN}, "version": "2.7.0"}`, nil, true, true},
		{"parameters given to a notebook that has it", `{"parameters": {"x": 2}}`, []string{"-p", "x", "3"}, true, false},
		{"null is not papermill's", `null`, nil, false, false},
		{"on", "", []string{"--papermill-metadata", "on"}, true, false},
		{"off with parameters", "", []string{"-p", "x", "1", "--papermill-metadata=off"}, false, false},
		{"off removes what an earlier run left", `{"parameters": {"x": 2}}`, []string{"--papermill-metadata", "off"}, false, false},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".ipynb")
			writeTaggedNotebook(t, in, "tagged:x = 0", "print(x)")
			if tt.existing != "" {
				setNotebookMetadata(t, in, "papermill", tt.existing)
			}
			off := slices.Contains(tt.flags, "off") || slices.Contains(tt.flags, "--papermill-metadata=off")
			out := strings.TrimSuffix(in, ".ipynb") + ".out.ipynb"
			b, err := command(t, append([]string{"nb", "run", in, "-o", out}, tt.flags...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("nb run: %v\n%s", err, b)
			}
			if got := strings.Contains(string(b), noted); got != tt.note {
				t.Errorf("said why it writes: %v, want %v: %s", got, tt.note, b)
			}
			nb := readRawNotebook(t, out)
			pm, present := nb.Metadata["papermill"]
			if got := strings.Contains(string(pm), `"start_time"`); got != tt.want {
				t.Fatalf("metadata.papermill written: %v, want %v: %s", got, tt.want, pm)
			}
			if present != (tt.want || tt.existing != "" && !off) {
				t.Fatalf("metadata.papermill present: %v; want it written, or the input's kept unless off: %s", present, pm)
			}
			for i, c := range nb.Cells {
				if _, ok := c.Metadata["papermill"]; ok != tt.want {
					t.Errorf("cell %d has metadata.papermill: %v, want %v", i, ok, tt.want)
				}
			}
			if tt.want && tt.existing != "" && !slices.Contains(tt.flags, "-p") &&
				!strings.Contains(string(pm), `"x": 2`) && !strings.Contains(string(pm), `"x": "NaN"`) {
				t.Errorf("the recorded parameters are gone: %s", pm)
			}
		})
	}
	t.Run("a bad value is a usage error", func(t *testing.T) {
		in := filepath.Join(dir, "bad.ipynb")
		writeTaggedNotebook(t, in, "x = 0")
		b, err := command(t, "nb", "run", in, "--papermill-metadata", "maybe").CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(b), "want auto, on or off") {
			t.Fatalf("%v, want exit 2 with the values: %s", err, b)
		}
	})
}

// rawNotebook is a notebook's metadata, the notebook's and each cell's.
type rawNotebook struct {
	Metadata map[string]json.RawMessage
	Cells    []struct {
		CellType string `json:"cell_type"`
		Metadata map[string]json.RawMessage
	}
}

// readRawNotebook reads path as Python's json reads it (NaN and the
// infinities, which encoding/json refuses, become the strings "NaN" …).
func readRawNotebook(t *testing.T, path string) rawNotebook {
	t.Helper()
	script := "import json, sys\njson.dump(json.load(open(sys.argv[1]), parse_constant=str), sys.stdout)"
	data, err := exec.Command("python3", "-c", script, path).Output()
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var nb rawNotebook
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return nb
}

// setNotebookMetadata sets the notebook's metadata member name to the JSON
// value, read and written by Python's json as nbformat's (NaN included),
// and, when it is an object, each code cell's to a completed status, as a
// run that wrote it left them.
func setNotebookMetadata(t *testing.T, path, name, value string) {
	t.Helper()
	script := "import json, sys, nbformat\nnb = nbformat.read(sys.argv[1], as_version=4)\n" +
		"v = nb.metadata[sys.argv[2]] = json.loads(sys.argv[3])\n" +
		"for c in nb.cells:\n    if isinstance(v, dict) and c.cell_type == 'code': c.metadata[sys.argv[2]] = {'status': 'completed'}\n" +
		"nbformat.write(nb, sys.argv[1])"
	if out, err := exec.Command("python3", "-c", script, path, name, value).CombinedOutput(); err != nil {
		t.Fatalf("set metadata: %v\n%s", err, out)
	}
}

// writeTaggedNotebook is writeNotebook where "tagged:" cells carry the
// parameters tag and "injected:" ones injected-parameters.
func writeTaggedNotebook(t *testing.T, path string, cells ...string) {
	t.Helper()
	script := testkit.NbformatPrelude + `
import json, sys, nbformat
nb = nbformat.v4.new_notebook()
nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
for src in json.loads(sys.argv[2]):
    if src.startswith("md:"):
        nb.cells.append(nbformat.v4.new_markdown_cell(src[3:]))
        continue
    tag = None
    for prefix, t in (("tagged:", "parameters"), ("injected:", "injected-parameters")):
        if src.startswith(prefix):
            src, tag = src[len(prefix):], t
    c = nbformat.v4.new_code_cell(src)
    if tag:
        c.metadata["tags"] = [tag]
    nb.cells.append(c)
nbformat.write(nb, sys.argv[1])
`
	list, _ := json.Marshal(cells)
	if out, err := exec.Command("python3", "-c", script, path, string(list)).CombinedOutput(); err != nil {
		t.Fatalf("write notebook: %v\n%s", err, out)
	}
}

// `evalhost nb run` keeps outputs as the kernel wrote them, as Jupyter
// does: ANSI colours, "\r\n", control characters in streams and results,
// and (from ipykernel, through the gateway backend) coloured tracebacks.
// The runner's tracebacks have no colour, and none is added.
func TestNotebookOutputsKeepEscapes(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "papermill, nbclient, ipykernel", "papermill nbclient ipykernel")
	cells := []string{
		`print("\x1b[31mred\x1b[0m plain")`,
		`import sys; print("crlf\r\nbell\x07 tab\t.", file=sys.stderr)`,
		"for i in range(3):\n    print(f'{i}0%', end='\\r')\nprint('done')",
		"class A:\n    def __repr__(self): return '\\x1b[1mA\\x1b[0m'\nA()",
		`display({"text/html": "<b>raw</b>"}, raw=True)`, // no text/plain, as Jupyter writes it
	}
	t.Run("runner, as papermill writes them", func(t *testing.T) {
		dir := t.TempDir()
		in, ours := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "ours.ipynb")
		writeTaggedNotebook(t, in, cells...)
		if out, err := command(t, "nb", "run", in, "-o", ours, "--papermill-metadata", "on").CombinedOutput(); err != nil {
			t.Fatalf("nb run: %v\n%s", err, out)
		}
		cmp := exec.Command("python3", "testdata/compare_papermill.py", in, ours, filepath.Join(dir, "papermill.ipynb"))
		if out, err := cmp.CombinedOutput(); err != nil {
			t.Fatalf("differs from papermill's: %v\n%s", err, out)
		}
		if c := readNotebook(t, ours)[0]; !strings.Contains(string(c.Outputs[0].Text), `\u001b[31m`) {
			t.Errorf("the colour is gone: %s", c.Outputs[0].Text)
		}
	})
	t.Run("gateway, tracebacks coloured as ipykernel's", func(t *testing.T) {
		testkit.NeedModuleIn(t, "python3", "kernel_gateway", "jupyter_kernel_gateway")
		dir := t.TempDir()
		in, ours := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "ours.ipynb")
		writeTaggedNotebook(t, in, append(cells, "def f():\n    return 1/0\nf()")...)
		cmd := command(t, "nb", "run", in, "-o", ours, "--backend", "gateway", "--allow-errors")
		t.Cleanup(func() {
			stop := exec.Command(binary, "gateway", "stop")
			stop.Env = cmd.Env
			stop.Run()
		})
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("nb run: want exit 1 for the failing cell\n%s", out)
		}
		if out, err := exec.Command("python3", "testdata/compare_nbclient.py", in, ours).CombinedOutput(); err != nil {
			t.Fatalf("differs from nbclient's: %v\n%s", err, out)
		}
	})
}
