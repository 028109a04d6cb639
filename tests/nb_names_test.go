package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// nbJSON is a one-cell nbformat 4.5 notebook of kernel language lang.
func nbJSON(src, lang string) string {
	s, _ := json.Marshal(src)
	return `{"cells":[{"cell_type":"code","execution_count":null,"id":"c0","metadata":{},"outputs":[],"source":` + string(s) +
		`}],"metadata":{"kernelspec":{"display_name":"K","language":"` + lang + `","name":"k"},"language_info":{"name":"` + lang +
		`"}},"nbformat":4,"nbformat_minor":5}`
}

// TestNotebookMessagesShowNames: every message of the nb commands that
// names a file (notes, refusals, "wrote X", errors from the notebook
// packages) prints a name holding an escape sequence, a newline with a
// fake line of evalhost's after it, or U+2028 quoted (trustdir.Shown; in
// a suggested command ShellQuote), so another user's file name cannot
// drive the terminal or pass for evalhost's words; an ordinary name
// prints as it is.
func TestNotebookMessagesShowNames(t *testing.T) {
	const fake = "evalhost: nb run: all cells ok, nothing to check"
	names := []struct {
		name, base string
		ordinary   bool
	}{
		{"escape sequences", "t\x1b]0;owned\x07\x1b[2Jx", false},
		{"a newline and a fake line", "t\n" + fake + "\nx", false},
		{"U+2028", "t\u2028" + fake + "\u2028x", false},
		{"ordinary", "plain", true},
	}
	type paths struct{ dir, nb, converted, script, paired string }
	waitStarted := "open('started', 'w').close()\nimport time\ntime.sleep(300)"
	appendToNotebooks := "import glob\nfor p in glob.glob('*.ipynb'):\n    open(p, 'a').write(' ')"
	cases := []struct {
		name      string
		setup     func(p paths) // files to make besides the notebook (nbSrc) or script (pySrc)
		nbSrc     string        // the notebook's one code cell ("" none made)
		lang      string
		pySrc     string // the script's text ("" none made)
		args      func(p paths) []string
		stdin     string
		interrupt bool // a cell opens the FIFO "started", then the test sends SIGINT
		code      int
		shows     func(p paths) []string // what the output must hold, each name shown
	}{
		{name: "view of a missing file", args: func(p paths) []string { return []string{"view", p.nb} }, code: 1,
			shows: func(p paths) []string { return []string{"cannot open " + trustdir.Shown(p.nb)} }},
		{name: "view of invalid JSON", setup: func(p paths) { os.WriteFile(p.nb, []byte("{nope"), 0o644) },
			args: func(p paths) []string { return []string{"view", p.nb} }, code: 1,
			shows: func(p paths) []string { return []string{trustdir.Shown(p.nb) + ": invalid notebook JSON"} }},
		{name: "view --json", nbSrc: "x = 1", args: func(p paths) []string { return []string{"view", "--json", p.nb} }},
		{name: "apply creates", args: func(p paths) []string { return []string{"apply", p.nb} }, stdin: "# %%\nx = 1\n",
			shows: func(p paths) []string { return []string{"created " + trustdir.Shown(p.nb) + " (1 cell)"} }},
		{name: "apply unchanged", nbSrc: "x = 1", args: func(p paths) []string { return []string{"apply", p.nb} }, stdin: "# %% [code] cell:0\nx = 1\n",
			shows: func(p paths) []string { return []string{"unchanged: " + trustdir.Shown(p.nb) + " (1 cell)"} }},
		{name: "apply updates", nbSrc: "x = 1", args: func(p paths) []string { return []string{"apply", p.nb} }, stdin: "# %% [code] cell:0\nx = 2\n",
			shows: func(p paths) []string { return []string{"updated " + trustdir.Shown(p.nb) + " (1 cell)"} }},
		{name: "apply of bad text", nbSrc: "x = 1", args: func(p paths) []string { return []string{"apply", p.nb} }, stdin: "# %% [nope]\nx = 2\n", code: 1,
			shows: func(p paths) []string { return []string{trustdir.Shown(p.nb) + ": invalid notebook text"} }},
		{name: "edit", nbSrc: "x = 1", args: func(p paths) []string { return []string{"edit", p.nb, "--cell", "0", "--content", "x = 2"} },
			shows: func(p paths) []string {
				return []string{"edited code cell 0 in " + trustdir.Shown(p.nb) + " (1 cell now)"}
			}},
		{name: "edit out of range", nbSrc: "x = 1", args: func(p paths) []string { return []string{"edit", p.nb, "--cell", "9", "--content", "x"} }, code: 1,
			shows: func(p paths) []string { return []string{trustdir.Shown(p.nb) + ": edit: cell 9 is out of range"} }},
		{name: "insert", nbSrc: "x = 1", args: func(p paths) []string { return []string{"insert", p.nb, "--cell", "1", "--content", "y = 2"} },
			shows: func(p paths) []string {
				return []string{"inserted code cell 1 in " + trustdir.Shown(p.nb) + " (2 cells now)"}
			}},
		{name: "delete", nbSrc: "x = 1", args: func(p paths) []string { return []string{"delete", p.nb, "--cell", "0"} },
			shows: func(p paths) []string {
				return []string{"deleted code cell 0 in " + trustdir.Shown(p.nb) + " (0 cells now)"}
			}},
		{name: "run wrote", nbSrc: "print('hi')", args: func(p paths) []string { return []string{"run", p.nb} },
			shows: func(p paths) []string {
				return []string{"ran 1 code cell (ok); wrote " + trustdir.Shown(p.converted) + "\n"}
			}},
		{name: "run with no parameters cell", nbSrc: "print(a)", args: func(p paths) []string { return []string{"run", p.nb, "-p", "a", "1"} },
			shows: func(p paths) []string {
				return []string{"note: no cell of " + trustdir.Shown(p.nb) + " is tagged parameters", "wrote " + trustdir.Shown(p.converted)}
			}},
		{name: "run interrupted", nbSrc: waitStarted, args: func(p paths) []string { return []string{"run", p.nb} }, interrupt: true, code: 130,
			setup: func(p paths) { syscall.Mkfifo(filepath.Join(p.dir, "started"), 0o600) },
			shows: func(p paths) []string {
				return []string{"interrupted; wrote " + trustdir.Shown(p.converted) + " with the outputs so far"}
			}},
		{name: "run conflict", nbSrc: appendToNotebooks, args: func(p paths) []string { return []string{"run", p.nb, "--inplace"} }, code: 1,
			shows: func(p paths) []string {
				return []string{trustdir.Shown(p.nb) + " changed on disk while its cells ran", "the executed notebook is in " + trustdir.Shown(p.converted) + ": compare the two"}
			}},
		{name: "run to a read-only file", nbSrc: "x = 1", setup: func(p paths) { os.WriteFile(p.converted, nil, 0o444) },
			args: func(p paths) []string { return []string{"run", p.nb} }, code: 1,
			shows: func(p paths) []string {
				return []string{"write notebook " + trustdir.Shown(p.converted) + ": the file is read-only"}
			}},
		{name: "run of another language", nbSrc: "x <- 1", lang: "R", args: func(p paths) []string { return []string{"run", p.nb} }, code: 1,
			shows: func(p paths) []string { return []string{trustdir.Shown(p.nb) + ": its kernel language is R"} }},
		{name: "run of what is no notebook", setup: func(p paths) { os.WriteFile(p.dir+"/"+filepath.Base(p.script)+".txt", []byte("hi\n"), 0o644) },
			args: func(p paths) []string { return []string{"run", p.script + ".txt"} }, code: 2,
			shows: func(p paths) []string { return []string{trustdir.Shown(p.script+".txt") + " is not a notebook"} }},
		{name: "run papermill's IN OUT", nbSrc: "x = 1", args: func(p paths) []string { return []string{"run", p.nb, p.converted} }, code: 2,
			shows: func(p paths) []string {
				return []string{"evalhost nb run " + trustdir.ShellQuote(p.nb) + " -o " + trustdir.ShellQuote(p.converted) + "\n"}
			}},
		{name: "script to its paired notebook", pySrc: "# %%\nprint('hi')\n", args: func(p paths) []string { return []string{"run", p.script} },
			shows: func(p paths) []string {
				return []string{"note: writing the executed notebook to " + trustdir.Shown(p.paired) + ", the notebook Jupytext pairs with " + trustdir.Shown(p.script) + " ",
					"wrote " + trustdir.Shown(p.paired) + "\n"}
			}},
		{name: "script's notebook exists", pySrc: "# %%\nx = 1\n", setup: func(p paths) { os.WriteFile(p.paired, []byte("{}"), 0o644) },
			args: func(p paths) []string { return []string{"run", p.script} }, code: 2,
			shows: func(p paths) []string {
				return []string{trustdir.Shown(p.paired) + " exists: without -o the executed notebook of " + trustdir.Shown(p.script) + " goes",
					"-o " + trustdir.ShellQuote(p.paired) + " replaces it"}
			}},
		{name: "script's notebook a dangling link", pySrc: "# %%\nx = 1\n", setup: func(p paths) { os.Symlink(filepath.Base(p.script)+".gone", p.paired) },
			args: func(p paths) []string { return []string{"run", p.script} }, code: 2,
			shows: func(p paths) []string {
				return []string{trustdir.Shown(p.paired) + " is a symlink to " + trustdir.Shown(filepath.Base(p.script)+".gone") + ", which does not exist; without -o the executed notebook of " +
					trustdir.Shown(p.script) + " goes there only when nothing is there: remove the link, or choose another -o\n"}
			}},
		{name: "script -o itself", pySrc: "# %%\nx = 1\n", args: func(p paths) []string { return []string{"run", p.script, "-o", p.script} }, code: 2,
			shows: func(p paths) []string {
				return []string{"-o " + trustdir.Shown(p.script) + " is the script itself", "(-o " + trustdir.ShellQuote(p.paired) + ")"}
			}},
		{name: "script --inplace", pySrc: "# %%\nx = 1\n", args: func(p paths) []string { return []string{"run", p.script, "--inplace"} }, code: 2,
			shows: func(p paths) []string {
				return []string{"--inplace: " + trustdir.Shown(p.script) + " is a percent script", "with -o " + trustdir.ShellQuote(p.paired) + "\n"}
			}},
		{name: "script not UTF-8", pySrc: "# %%\nprint('caf\xe9')\n", args: func(p paths) []string { return []string{"run", p.script, "-o", p.converted} }, code: 1,
			shows: func(p paths) []string {
				return []string{trustdir.Shown(p.script) + ": a script jupytext reads only in utf-8", "-t UTF-8 " + trustdir.ShellQuote(p.script) + " > NEW.py"}
			}},
		{name: "plain script", pySrc: "x = 1\n", args: func(p paths) []string { return []string{"run", p.script, "-o", p.converted} }, code: 2,
			shows: func(p paths) []string {
				return []string{trustdir.Shown(p.script) + ` has no "# %%" cell marker`, `run it with "evalhost run ` + trustdir.ShellQuote(p.script) + `"`}
			}},
		{name: "script header refused", pySrc: "# ---\n# jupyter:\n#   kernelspec: 3\n# ---\n# %%\nx = 1\n",
			args: func(p paths) []string { return []string{"run", p.script, "-o", p.converted} }, code: 1,
			shows: func(p paths) []string { return []string{trustdir.Shown(p.script) + ": a script whose Jupytext header"} }},
	}
	root := t.TempDir()
	for i, n := range names {
		t.Run(n.name, func(t *testing.T) {
			for j, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					dir := filepath.Join(root, fmt.Sprintf("%d-%d", i, j))
					if err := os.Mkdir(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					base := filepath.Join(dir, n.base)
					p := paths{dir: dir, nb: base + ".ipynb", converted: base + ".nbconvert.ipynb", script: base + ".py", paired: base + ".ipynb"}
					if tc.nbSrc != "" {
						lang := tc.lang
						if lang == "" {
							lang = "python"
						}
						if err := os.WriteFile(p.nb, []byte(nbJSON(tc.nbSrc, lang)), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					if tc.pySrc != "" {
						if err := os.WriteFile(p.script, []byte(tc.pySrc), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					if tc.setup != nil {
						tc.setup(p)
					}
					cmd := command(t, append([]string{"nb"}, tc.args(p)...)...)
					cmd.Stdin = strings.NewReader(tc.stdin)
					var stdout, stderr string
					var code int
					if tc.interrupt {
						stdout, stderr, code = runInterrupted(t, cmd, filepath.Join(dir, "started"))
					} else {
						stdout, stderr, code = runCaptured(t, cmd, false)
					}
					if code != tc.code {
						t.Fatalf("exit %d, want %d\nstdout %q\nstderr %q", code, tc.code, stdout, stderr)
					}
					out := stdout + stderr
					for _, r := range out {
						if r != '\n' && !unicode.IsPrint(r) {
							t.Errorf("the output holds %U raw\nstdout %q\nstderr %q", r, stdout, stderr)
							break
						}
					}
					if !utf8.ValidString(out) {
						t.Errorf("the output is not UTF-8\nstdout %q\nstderr %q", stdout, stderr)
					}
					if !n.ordinary && strings.Contains(out, n.base) {
						t.Errorf("the output holds the name raw\nstdout %q\nstderr %q", stdout, stderr)
					}
					if n.ordinary && !strings.HasPrefix(out, "{") && strings.Contains(out, `"`+dir) { // not --json's
						t.Errorf("the output quotes an ordinary name\nstdout %q\nstderr %q", stdout, stderr)
					}
					if tc.shows == nil {
						return
					}
					for _, s := range tc.shows(p) {
						if !strings.Contains(out, s) {
							t.Errorf("the output does not hold %q\nstdout %q\nstderr %q", s, stdout, stderr)
						}
					}
				})
			}
		})
	}
}

// runInterrupted starts cmd, waits for its cell to open the FIFO started
// and sends it SIGINT, and returns what it wrote and its exit code.
func runInterrupted(t *testing.T, c *exec.Cmd, fifo string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill() })
	exited := make(chan struct{})
	go func() {
		c.Wait()
		close(exited)
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // the test's read of the FIFO ends
		}
	}()
	os.ReadFile(fifo)
	select {
	case <-exited:
		t.Fatalf("nb run exited before its cell started\nstderr %q", &errb)
	default:
	}
	c.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("nb run did not exit after SIGINT")
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}
