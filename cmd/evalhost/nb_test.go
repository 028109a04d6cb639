package main

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/sessions"
)

const nbFixture = "../../notebook/testdata/basic.ipynb"

func runNB(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	code = nbRun(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// copyFixture copies the fixture into a new directory under dir.
func copyFixture(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(nbFixture)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := os.MkdirTemp(dir, "case")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "nb.ipynb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// nbformatValidates fails unless the nbformat package accepts every path;
// it skips when nbformat is not installed. One Python process checks all,
// since importing nbformat is the slow part.
func nbformatValidates(t *testing.T, paths ...string) {
	t.Helper()
	const script = testkit.NbformatPrelude + `
import sys
try:
    import nbformat
except ImportError:
    sys.exit(3)
for p in sys.argv[1:]:
    nbformat.validate(nbformat.read(p, as_version=4))
`
	out, err := exec.Command("python3", append([]string{"-c", script}, paths...)...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Skip("python3 with nbformat is not available (pip install nbformat)")
	}
	if err != nil {
		t.Fatalf("nbformat rejects a written notebook: %v\n%s", err, out)
	}
}

func TestNBViewApplyIdentity(t *testing.T) {
	path := copyFixture(t, t.TempDir())
	before := fileHash(t, path)
	code, text, errs := runNB(t, "", "view", path)
	if code != 0 || !strings.HasPrefix(text, "# %% [markdown] cell:0\n") {
		t.Fatalf("view: %d %q %s", code, text, errs)
	}
	code, out, errs := runNB(t, text, "apply", path)
	if code != 0 || !strings.Contains(out, "unchanged:") {
		t.Fatalf("apply: %d %q %s", code, out, errs)
	}
	if fileHash(t, path) != before {
		t.Fatal("view | apply changed the file")
	}
}

func TestNBCommands(t *testing.T) {
	tests := []struct {
		name    string
		args    []string // "FILE" is replaced by a fresh copy of the fixture
		stdin   string
		code    int
		out     string // substring of stdout
		written bool   // the file must change and validate with nbformat
	}{
		{"view lines", []string{"view", "FILE", "--lines", "2,9-10", "-n"}, "", 0, "2\t# Title\n9\t# %% [code] cell:2\n10\tprint(x)\n", false},
		{"view json lines", []string{"view", "FILE", "--json", "--lines", "1"}, "", 0, `"lines":[{"line":1,"text":"# %% [markdown] cell:0"}]`, false},
		{"apply edit", []string{"apply", "FILE", "--json"}, "# %% [code] cell:2\nprint(x * 3)\n# %% [markdown]\nnew\n", 0, `"totalCells":2`, true},
		{"edit", []string{"edit", "FILE", "--cell", "1", "--content", "y = 1\n", "--json"}, "", 0, `"cellSource":"y = 1\n"`, true},
		{"edit from stdin", []string{"edit", "FILE", "--cell", "0", "--content-file", "-"}, "# New title", 0, "edited markdown cell 0", true},
		{"insert markdown", []string{"insert", "FILE", "--cell", "5", "--type", "markdown", "--content", "end"}, "", 0, "inserted markdown cell 5", true},
		{"delete", []string{"delete", "FILE", "--cell", "2", "--json"}, "", 0, `"cellSource":"print(x)\nx"`, true},
		// Bad input: exit code, message, file untouched.
		{"invalid text", []string{"apply", "FILE"}, "\n# %% [code] cell:0\n", 1, "", false},
		{"bad marker", []string{"apply", "FILE"}, "# %% [python]\n", 1, "", false},
		{"edit out of range", []string{"edit", "FILE", "--cell", "9", "--content", "x"}, "", 1, "", false},
		{"insert out of range", []string{"insert", "FILE", "--cell", "6", "--content", "x"}, "", 1, "", false},
		{"delete out of range", []string{"delete", "FILE", "--cell", "5"}, "", 1, "", false},
		{"edit without content", []string{"edit", "FILE", "--cell", "1"}, "", 2, "", false},
		{"edit without cell", []string{"edit", "FILE", "--content", "x"}, "", 2, "", false},
		{"bad type", []string{"insert", "FILE", "--cell", "0", "--type", "heading", "--content", "x"}, "", 2, "", false},
		{"edit with latin-1 content", []string{"edit", "FILE", "--cell", "0", "--content-file", "-"}, "caf\xe9", 1, "", false},
		{"insert with latin-1 content", []string{"insert", "FILE", "--cell", "0", "--content", "caf\xe9"}, "", 1, "", false},
		{"apply latin-1 text", []string{"apply", "FILE"}, "# %% [code] cell:0\ncaf\xe9\n", 1, "", false},
		{"bad lines", []string{"view", "FILE", "--lines", "5-2"}, "", 2, "", false},
		{"lines past end", []string{"view", "FILE", "--lines", "500"}, "", 1, "", false},
		{"no file", []string{"view"}, "", 2, "", false},
		{"unknown command", []string{"frobnicate", "FILE"}, "", 2, "", false},
		{"unknown flag", []string{"view", "FILE", "--bogus"}, "", 2, "", false},
		{"run with a bad flag value", []string{"run", "--timeout", "abc", "FILE"}, "", 2, "", false},
		{"run with a timeout over 600", []string{"run", "--timeout", "3600", "FILE"}, "", 2, "", false},
	}
	var written []string
	root := t.TempDir() // outlives the subtests, for the final validation
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := copyFixture(t, root)
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "FILE" {
					args[i] = path
				}
			}
			before := fileHash(t, path)
			code, out, errs := runNB(t, tt.stdin, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.code, out, errs)
			}
			if !strings.Contains(out, tt.out) {
				t.Errorf("stdout %q lacks %q", out, tt.out)
			}
			if code != 0 && !strings.Contains(errs, "evalhost nb") {
				t.Errorf("stderr %q does not say what failed", errs)
			}
			if changed := fileHash(t, path) != before; changed != tt.written {
				t.Fatalf("file changed = %v, want %v", changed, tt.written)
			}
			if tt.written {
				written = append(written, path)
			}
		})
	}
	t.Run("nbformat validates what was written", func(t *testing.T) { nbformatValidates(t, written...) })
}

func TestNBErrorsNameTheProblem(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.ipynb")
	os.WriteFile(bad, []byte(`{"cells":[{"cell_type":"code","source":7}]}`), 0o644)
	before := fileHash(t, bad)
	code, _, errs := runNB(t, "# %% [code]\nx\n", "apply", bad)
	if code != 1 || !strings.Contains(errs, `cell 0: field "source"`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if fileHash(t, bad) != before {
		t.Error("invalid notebook was overwritten")
	}
}

func TestNBApplyCreatesMissingNotebook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.ipynb")
	code, out, errs := runNB(t, "# %% [markdown]\n# Hi\n# %% [code]\nprint(1)\n", "apply", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var details struct {
		Created    bool
		TotalCells int
	}
	if err := json.Unmarshal([]byte(out), &details); err != nil || !details.Created || details.TotalCells != 2 {
		t.Fatalf("details %q: %+v %v", out, details, err)
	}
	nbformatValidates(t, path)
}

// TestNBRunRefusesOtherLanguages: a notebook of another language is not run
// as Python (which would replace its outputs with Python errors).
func TestNBRunRefusesOtherLanguages(t *testing.T) {
	tests := []struct{ name, metadata, want string }{
		{"R kernelspec", `{"kernelspec": {"display_name": "R", "language": "R", "name": "ir"}}`, "kernel language is R"},
		{"bash language_info", `{"language_info": {"name": "bash"}}`, "kernel language is bash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nb.ipynb")
			os.WriteFile(path, []byte(`{"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": "x <- 1"}], "metadata": `+tt.metadata+`, "nbformat": 4, "nbformat_minor": 4}`), 0o644)
			before := fileHash(t, path)
			var out, errb strings.Builder
			code := nbExecute([]string{path, "--inplace"}, &out, &errb)
			if code != exitFailed || !strings.Contains(errb.String(), tt.want) || !strings.Contains(errb.String(), "Python cells only") {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errb.String(), exitFailed, tt.want)
			}
			if fileHash(t, path) != before {
				t.Error("the notebook was changed")
			}
		})
	}
}

// A cell's source from a file an editor saved with a byte order mark
// (Notepad's) is the text without it, as python3 reads a source file: the
// mark at the start of a cell is a SyntaxError in it.
func TestNBContentFileDropsByteOrderMark(t *testing.T) {
	path := copyFixture(t, t.TempDir())
	src := filepath.Join(filepath.Dir(path), "cell.py")
	if err := os.WriteFile(src, []byte("\ufeffy = 2\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"edit", path, "--cell", "1", "--content-file", src},
		{"edit", path, "--cell", "1", "--content-file", "-"},
	} {
		stdin := ""
		if args[len(args)-1] == "-" {
			stdin = "\ufeffy = 2\r\n"
		}
		if code, _, stderr := runNB(t, stdin, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		_, out, _ := runNB(t, "", "view", path)
		if !strings.Contains(out, "cell:1\ny = 2\r\n") || strings.Contains(out, "\ufeff") {
			t.Fatalf("%v: the view is\n%q", args, out)
		}
	}
}

// nb run's cells have no time limit unless --timeout gives one, as
// nbclient's and papermill's (timeout None): a notebook's cells train and
// load for minutes, and a cell stopped part way is lost work. The 30 s
// default is the agent's tool's (run, serve, mcp).
func TestNBRunDefaultTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want time.Duration
	}{
		{"default: none, as nbclient", nil, sessions.NoTimeout},
		{"--timeout 0: none", []string{"--timeout", "0"}, sessions.NoTimeout},
		{"--timeout 45", []string{"--timeout", "45"}, 45 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			f, path, _, ok := parseNbRunFlags(append([]string{"x.ipynb"}, tc.args...), &stdout, &stderr)
			if !ok {
				t.Fatalf("parse: %s", stderr.String())
			}
			if got := f.runOptions(path, nil, "out.ipynb", false).Timeout; got != tc.want {
				t.Errorf("cell timeout %v, want %v", got, tc.want)
			}
		})
	}
}

// A notebook past what evalhost reads (one nb run wrote) is refused with
// what makes it readable again, not the size alone.
func TestNBTooLargeSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	path, script := filepath.Join(dir, "big.ipynb"), filepath.Join(dir, "big.py")
	var errs []error
	for _, p := range []string{path, script} {
		os.WriteFile(p, []byte(strings.Repeat(" ", 64)), 0o644)
		_, err := readBounded(p, nil, 16)
		errs = append(errs, err)
	}
	tests := []struct {
		name string
		err  error
		path string
		want string
	}{
		{"too large", errs[0], path, "larger than 0 MiB, the most evalhost reads; clearing its outputs (jupyter nbconvert --clear-output --inplace " + path + ")"},
		// A script has no outputs: nbconvert's advice was wrong for it.
		{"a percent script too large", errs[1], script, "larger than 0 MiB, the most evalhost reads; a percent script holds no outputs to clear: its own text is that large " +
			"(data written into its code?); keep the data in a file the script reads"},
		{"other error unchanged", errors.New("cannot open x"), path, "cannot open x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tooLargeNotebook(tt.err, tt.path)
			if !strings.Contains(got.Error(), tt.want) || !errors.Is(got, tt.err) {
				t.Errorf("got %q, want it to contain %q and wrap the cause", got, tt.want)
			}
			if tt.name == "other error unchanged" && got.Error() != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
