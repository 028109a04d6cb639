package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// pairedScript is a Jupytext-paired percent script: a markdown cell, the
// cell tagged parameters, a raw cell, a magic Jupytext commented out.
const pairedScript = `# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.16.1
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A report
#
# Some *text*, and a fenced block:
#
# ` + "```" + `
# # %% not a cell
# ` + "```" + `

# %% tags=["parameters"]
alpha = 0.1

# %%
print("alpha is", alpha)

# %% [raw]
# raw text

# %% Title of a cell
# %env EVALHOST_T=set
import os
os.environ["EVALHOST_T"]
`

// "evalhost nb run nb.py -o out.ipynb -p alpha 0.7" writes what
// "jupytext --to ipynb nb.py && papermill nb.ipynb out.ipynb -p alpha 0.7"
// writes: the markdown and raw cells kept, the parameters injected after
// the cell tagged parameters, each code cell's printed text and result,
// papermill's metadata; nbformat validates it.
func TestNotebookRunPercentScriptMatchesPapermill(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "papermill, jupytext, ipykernel", "papermill jupytext ipykernel")
	dir := t.TempDir()
	script := filepath.Join(dir, "nb.py")
	if err := os.WriteFile(script, []byte(pairedScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(dir, "out.ipynb")
	stdout, stderr, code := runCaptured(t, command(t, "nb", "run", script, "-o", ours, "-p", "alpha", "0.7"), false)
	if code != 0 || !strings.Contains(stdout, "ran 4 code cells (ok); wrote "+ours) {
		t.Fatalf("nb run: exit %d\n%s%s", code, stdout, stderr)
	}
	cmp := exec.Command("python3", "testdata/compare_papermill.py", script, ours, filepath.Join(dir, "papermill.ipynb"), "-p", "alpha", "0.7")
	if out, err := cmp.CombinedOutput(); err != nil {
		t.Fatalf("differs from jupytext and papermill's: %v\n%s", err, out)
	}
	var nb struct {
		Cells []struct {
			Type    string          `json:"cell_type"`
			Source  []string        `json:"source"`
			Outputs json.RawMessage `json:"outputs"`
		} `json:"cells"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	data, err := os.ReadFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range nb.Cells {
		kinds = append(kinds, c.Type+":"+strings.Join(c.Source, ""))
	}
	want := []string{"markdown:# A report\n\nSome *text*, and a fenced block:\n\n```\n# %% not a cell\n```", "code:alpha = 0.1",
		"code:# Parameters\nalpha = 0.7\n", `code:print("alpha is", alpha)`, "raw:raw text",
		"code:%env EVALHOST_T=set\nimport os\nos.environ[\"EVALHOST_T\"]"}
	if strings.Join(kinds, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("cells\n got %q\nwant %q", kinds, want)
	}
	if out := string(nb.Cells[3].Outputs); !strings.Contains(out, `"alpha is 0.7\n"`) {
		t.Errorf("the print cell's outputs: %s", out)
	}
	// -o names no file of the pair: jupytext drops formats from it.
	if _, ok := nb.Metadata["jupytext"]; ok {
		t.Errorf("metadata.jupytext: %s", nb.Metadata["jupytext"])
	}
}

// Without -o a script's executed notebook goes where jupytext --to ipynb
// --execute writes it, the notebook paired with it (which keeps its
// jupytext.formats), said on stderr; a second run does not replace it
// unless -o names it.
func TestNotebookRunPercentScriptWithoutOutput(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "nbformat", "nbformat")
	dir := t.TempDir()
	script := filepath.Join(dir, "nb.py")
	if err := os.WriteFile(script, []byte(pairedScript), 0o644); err != nil {
		t.Fatal(err)
	}
	paired := filepath.Join(dir, "nb.ipynb")
	stdout, stderr, code := runCaptured(t, command(t, "nb", "run", script), false)
	if code != 0 || !strings.Contains(stdout, "wrote "+paired) || !strings.Contains(stderr, "note: writing the executed notebook to "+paired) {
		t.Fatalf("nb run: exit %d\n%s%s", code, stdout, stderr)
	}
	check := exec.Command("python3", "-c", `
import sys, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbformat.validate(nb)
assert nb.metadata["jupytext"] == {"formats": "ipynb,py:percent"}, nb.metadata.get("jupytext")
assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code", "raw", "code"], nb.cells
`, paired)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", paired, err, out)
	}
	before, err := os.ReadFile(paired)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCaptured(t, command(t, "nb", "run", script), false)
	if code != 2 || !strings.Contains(stderr, paired+" exists") || !strings.Contains(stderr, "-o "+paired+" replaces it") {
		t.Fatalf("a second run: exit %d, want 2 saying -o replaces it\n%s", code, stderr)
	}
	if after, _ := os.ReadFile(paired); string(after) != string(before) {
		t.Fatalf("%s changed", paired)
	}
	if _, stderr, code = runCaptured(t, command(t, "nb", "run", script, "-o", paired), false); code != 0 {
		t.Fatalf("-o %s: exit %d\n%s", paired, code, stderr)
	}
}

// What nb run refuses of a file that is no notebook it reads, before any
// cell runs and writing nothing: --inplace on a script (it holds no
// outputs), a plain script (run's), a Jupytext script of another format
// (with the command converting it), -o naming the script, a file that is
// neither JSON nor a script, a header jupytext refuses.
func TestNotebookRunScriptRefusals(t *testing.T) {
	light := "# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       extension: .py\n#       format_name: light\n# ---\n\n# +\nx = 1\n"
	for _, tc := range []struct {
		name, file, src string
		args            []string // after FILE; OUT is the output's path
		code            int
		says            []string
	}{
		{"--inplace", "nb.py", pairedScript, []string{"--inplace"}, 2,
			[]string{"--inplace: ", "is a percent script, which holds no outputs; write the executed notebook with -o ", "nb.ipynb"}},
		{"a plain script", "plain.py", "x = 1\nprint(x)\n", []string{"-o", "OUT"}, 2,
			[]string{"has no \"# %%\" cell marker and no Jupytext header: it is a plain script, not a notebook; run it with \"evalhost run "}},
		{"a light script", "light.py", light, []string{"-o", "OUT"}, 2, []string{"format_name: light", `convert it with "jupytext --to py:percent"`}},
		{"-o the script", "nb.py", pairedScript, []string{"-o", "SELF"}, 2, []string{"is the script itself"}},
		{"neither JSON nor a script", "notes.txt", "# %%\nx = 1\n", []string{"-o", "OUT"}, 2,
			[]string{"notes.txt is not a notebook: nb run reads .ipynb notebooks (JSON) and Jupytext percent scripts"}},
		{"a header jupytext refuses", "bad.py", "# ---\n# jupyter:\n#   kernelspec: 3\n# ---\n# %%\nx = 1\n", []string{"-o", "OUT"}, 1,
			[]string{"jupyter.kernelspec is 3 (an int), where jupytext reads a mapping"}},
		// jupytext reads UTF-8 alone; python3 (evalhost run) reads more.
		{"a script not UTF-8", "latin.py", "# %%\nprint('caf\xe9')\n", []string{"-o", "OUT"}, 1,
			[]string{"line 2 is not UTF-8 (byte 0xe9)", "convert it to UTF-8 (iconv -f ENCODING -t UTF-8 ", `or run it with "evalhost run `, `latin.py", which reads it as python3 does`}},
		{"a coding line jupytext refuses", "coded.py", "# -*- coding: latin-1 -*-\n# %%\nprint('caf\xe9')\n", []string{"-o", "OUT"}, 1,
			[]string{"line 1 declares coding latin-1", `or run it with "evalhost run `}},
		{"a kernel in another language", "r.py", "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: R\n#     language: R\n#     name: ir\n# ---\n# %%\nx <- 1\n",
			[]string{"-o", "OUT"}, 1, []string{"its kernel language is R", "nothing was run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file, out := filepath.Join(dir, tc.file), filepath.Join(dir, "out.ipynb")
			if err := os.WriteFile(file, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"nb", "run", file}
			for _, a := range tc.args {
				args = append(args, strings.NewReplacer("OUT", out, "SELF", file).Replace(a))
			}
			stdout, stderr, code := runCaptured(t, command(t, args...), false)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr %q does not say %q", stderr, s)
				}
			}
			if got, _ := os.ReadFile(file); string(got) != tc.src {
				t.Errorf("%s changed", file)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("files written: %v", entries)
			}
		})
	}
}
