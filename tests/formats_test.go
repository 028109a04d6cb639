package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cellEnds returns run --json's cell_end lines.
func cellEnds(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var ends []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if line["type"] == "cell_end" {
			ends = append(ends, line)
		}
	}
	return ends
}

// A Jupytext-style script: marker metadata is metadata (run --json shows
// titles and tags), raw and markdown cells never run, commented magics
// and help (# r?) run under Jupytext's header, and parameters land after the parameters
// cell.
func TestRunJupytextScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "report.py")
	src := `# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %% Defaults tags=["parameters"]
n = 1

# %% [raw]
this is not Python

# %% [markdown]
# Prose

# %% tags=["active-py"]
print("script only")

# %% Report {"tags": ["output"]}
# %time r = n * 2
# r?
print("r =", r)
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := command(t, "run", "--json", "-p", "n", "21", script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s%s", err, out, stderr.String())
	}
	if strings.Contains(stderr.String(), "note:") {
		t.Errorf("a note about the parameters cell of a script that has one: %s", stderr.String())
	}
	ends := cellEnds(t, out)
	var got []string
	for _, e := range ends {
		tags, _ := json.Marshal(e["tags"])
		got = append(got, e["status"].(string)+"|"+str(e["title"])+"|"+string(tags))
	}
	want := []string{`ok|Defaults|["parameters"]`, `ok||["injected-parameters"]`, `ok|Report|["output"]`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("cells %q, want %q", got, want)
	}
	if !strings.Contains(string(out), `r = 42`) || !strings.Contains(string(out), `String form: 42`) || strings.Contains(string(out), "script only") {
		t.Fatalf("output:\n%s", out)
	}
}

// Parameters for a script without a cell tagged parameters go first, and
// the run says so, as nb run and papermill do: the script's own assignment
// then wins.
func TestRunParametersWithoutTheirCell(t *testing.T) {
	script := filepath.Join(t.TempDir(), "np.py")
	if err := os.WriteFile(script, []byte("x = 0\n# %%\nprint('x =', x)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := command(t, "run", "-p", "x", "5", script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || string(out) != "x = 0\n" || !strings.Contains(stderr.String(), "note: no cell of "+script+" is tagged parameters") {
		t.Fatalf("exit %v, stdout %q, stderr %q; want x = 0 and the note", err, out, stderr.String())
	}
}

// A parameters cell that does not run (markdown, raw, a blank code cell)
// still places the injected cell right after it, as papermill places it
// in the notebook Jupytext reads the script into, and as nb run does: the
// cells above it run without the parameters. An injected-parameters one is
// replaced.
func TestRunParametersAfterACellThatDoesNotRun(t *testing.T) {
	cases := []struct{ name, marker string }{
		{"markdown", "# %% [markdown] tags=[\"parameters\"]\n# the parameters\n"},
		{"raw", "# %% [raw] tags=[\"parameters\"]\n"},
		{"blank code", "# %% tags=[\"parameters\"]\n\n"},
		{"markdown injected", "# %% [markdown] tags=[\"injected-parameters\"]\n# old\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "mdp.py")
			src := "# %%\nprint('c0', globals().get('a'))\n" + c.marker + "# %%\nprint('c1', a)\n"
			if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd := command(t, "run", "-p", "a", "5", script)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || string(out) != "c0 None\nc1 5\n" || strings.Contains(stderr.String(), "no cell of") {
				t.Fatalf("exit %v, stdout %q, stderr %q; want the parameters after the tagged cell, no note", err, out, stderr.String())
			}
		})
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// A bad parameter is a usage error that says what is wrong, before
// anything runs.
func TestParameterErrors(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.ipynb")
	writeNotebook(t, nb, "print('ran')")
	yamlList := filepath.Join(dir, "list.yaml")
	os.WriteFile(yamlList, []byte("- a\n- b\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run: bad name", []string{"run", "-c", "print(1)", "-p", "my-name", "1"}, `-p my-name: parameter name "my-name" is not a Python identifier`},
		{"run: missing value", []string{"run", "-c", "print(1)", "-p", "x"}, "-p needs NAME VALUE"},
		{"nb run: bad YAML", []string{"nb", "run", nb, "-y", "a: [1"}, "-y: not valid YAML: line 1"},
		{"nb run: not a mapping", []string{"nb", "run", nb, "-f", yamlList}, "want a mapping of parameter names to values"},
		{"nb run: missing file", []string{"nb", "run", nb, "-f", filepath.Join(dir, "nope.yaml")}, "-f: cannot open " + filepath.Join(dir, "nope.yaml")},
		{"nb run: negative timeout", []string{"nb", "run", nb, "--timeout", "-1"}, "or 0 for no limit"},
		{"nb run: timeout over 600, refused, not cut short", []string{"nb", "run", nb, "--timeout", "601"}, "--timeout 601: want seconds from 1 to 600"},
		{"run: timeout over 600", []string{"run", "-c", "print(1)", "--timeout", "3600"}, "--timeout 3600: want seconds from 1 to 600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := command(t, tt.args...)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tt.want) || strings.Contains(string(out), "ran") {
				t.Fatalf("err %v stdout %q stderr %q; want exit 2 saying %q", err, out, stderr.String(), tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nb.nbconvert.ipynb")); err == nil {
		t.Fatal("a refused run wrote a notebook")
	}
}

// nb run --timeout 0 runs without a per-cell limit; --log-output streams
// the outputs to stderr as papermill logs them.
func TestNotebookRunLogOutput(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.ipynb")
	writeNotebook(t, nb, "md:# Title", "print('hello')", "6 * 7")
	var stderr bytes.Buffer
	cmd := command(t, "nb", "run", nb, "--timeout", "0", "--log-output")
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("nb run: %v\n%s%s", err, out, stderr.String())
	}
	want := "Executing Cell 2---------------------------------------\nhello\n\nEnding Cell 2------------------------------------------\n" +
		"Executing Cell 3---------------------------------------\n42\nEnding Cell 3------------------------------------------\n"
	if stderr.String() != want {
		t.Fatalf("stderr\n%q\nwant\n%q", stderr.String(), want)
	}
}

// The log is a side channel: a reader of it that goes away (| head -1) does
// not stop the run; every cell runs and the notebook is written, as
// papermill's run goes on.
func TestNotebookRunLogReaderGone(t *testing.T) {
	dir := t.TempDir()
	nb, out := filepath.Join(dir, "nb.ipynb"), filepath.Join(dir, "out.ipynb")
	writeNotebook(t, nb, "print('one')", "print('two')", "print('three')")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := command(t, "nb", "run", nb, "-o", out, "--log-output")
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	first := make([]byte, 16)
	if _, err := io.ReadFull(r, first); err != nil { // the log has begun
		t.Fatal(err)
	}
	r.Close() // as head -1 does
	if err := cmd.Wait(); err != nil {
		t.Fatalf("nb run after its log's reader left: %v; want exit 0", err)
	}
	cells := readNotebook(t, out)
	if len(cells) != 3 || text(cells[2].Outputs[0].Text) != "three\n" {
		t.Fatalf("cells %+v; want all three run", cells)
	}
}
