package runner

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// The prelude's names (read, write, env, tree, diff, tool, ...) are not the
// user's variables under --ipython: %reset -f brings them back as IPython
// brings back its own (In, Out, exit), and %pylab does not warn that it
// clobbered them, as it warns for the user's own.
func TestFullIPythonModeStartupNames(t *testing.T) {
	needIPython(t)
	t.Run("reset keeps them", func(t *testing.T) {
		p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
		wantOK(t, p.run("x = 1\ndiff = 'mine'"))
		wantOK(t, p.run("%reset -f"))
		c := p.run("diff('a\\n', 'b\\n')\nprint(callable(tool), callable(read), 'x' in globals())")
		wantOK(t, c)
		if !strings.Contains(c.stdout, "-a\n+b\n") || !strings.Contains(c.stdout, "True True False") {
			t.Errorf("stdout %q, want the helpers' diff and no x", c.stdout)
		}
		c = p.run("%who_ls")
		wantOK(t, c)
		if r := text(t, wantResultFrame(t, c).Bundle, "text/plain"); r != "[]" {
			t.Errorf("%%who_ls after reset = %s, want []", r)
		}
	})
	t.Run("reset without -f goes ahead, as in ipykernel", func(t *testing.T) {
		// IPython takes its own StdinNotImplementedError as "no stdin to
		// ask": input() raises that class here.
		p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
		wantOK(t, p.run("x = 1"))
		wantOK(t, p.run("%reset"))
		wantResult("(False, True)")(t, p.run("('x' in globals(), callable(diff))"))
		c := p.run("input('name? ')")
		if e := wantError(t, c, "StdinNotImplementedError"); !strings.Contains(e.Evalue, "no interactive stdin") {
			t.Errorf("input() error %+v", e)
		}
		wantResult("True")(t, p.run("import IPython.core.error as e\ntry:\n    input()\nexcept e.StdinNotImplementedError:\n    ok = True\nok"))
	})
	t.Run("pylab", func(t *testing.T) {
		testkit.NeedModule(t, "matplotlib", "matplotlib")
		p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
		c := p.run("%pylab inline")
		wantOK(t, c)
		if strings.Contains(c.stderr, "clobbered") || !strings.Contains(c.stderr, "numpy's diff") {
			t.Errorf("stderr %q: want a note on evalhost's diff, no clobbering warning", c.stderr)
		}
		wantResult("array([2, 3])")(t, p.run("diff([1, 3, 6])")) // numpy's, as %pylab means
		wantOK(t, p.run("x = 1\nfft = 'mine'"))
		c = p.run("%pylab inline")
		wantOK(t, c)
		if !strings.Contains(c.stderr, "clobbered these variables: ['fft']") {
			t.Errorf("stderr %q: the user's own fft is clobbered, and IPython says so", c.stderr)
		}
	})
}

// History under --ipython is IPython's HistoryManager on an in-memory
// database, as a kernel's without its file: %history, %notebook, _i, _ih,
// In and Out as in ipykernel, and nothing under ~/.ipython holds it.
func TestFullIPythonModeHistory(t *testing.T) {
	needIPython(t)
	testkit.NeedModule(t, "nbformat", "nbformat")
	home := t.TempDir()
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1", "HOME=" + home}})
	wantResult("42")(t, p.run("x = 6\nx * 7"))
	c := p.run("from IPython.display import HTML, display\ndisplay(HTML('<b>h</b>'))\nprint('p')")
	wantOK(t, c)
	c = p.run("%history -n")
	wantOK(t, c)
	if !strings.Contains(c.stdout, "   1:\nx = 6\nx * 7\n") || !strings.Contains(c.stdout, "   3: %history -n\n") {
		t.Errorf("%%history -n printed %q", c.stdout)
	}
	// _i is the input as typed, _ih as run (IPython's HistoryManager).
	c = p.run("print(repr(_ih[1]), repr(_i), _ih[3].rstrip(), len(In), Out[1], _1)")
	if want := `'x = 6\nx * 7' '%history -n' get_ipython().run_line_magic('history', '-n') 5 42 42` + "\n"; c.stdout != want {
		t.Errorf("stdout %q, want %q", c.stdout, want)
	}
	nb := filepath.Join(t.TempDir(), "h.ipynb")
	wantOK(t, p.run("%notebook "+nb))
	b, err := os.ReadFile(nb)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cells []struct {
			Count   int      `json:"execution_count"`
			Source  []string `json:"source"`
			Outputs []struct {
				Type string         `json:"output_type"`
				Data map[string]any `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 4 || doc.Cells[0].Count != 1 || strings.Join(doc.Cells[0].Source, "") != "x = 6\nx * 7" {
		t.Fatalf("%%notebook wrote %s", b)
	}
	// IPython 9 records outputs too (8 has sources only): the display is one.
	if c := p.run("hasattr(get_ipython().history_manager, 'outputs')"); text(t, wantResultFrame(t, c).Bundle, "text/plain") == "True" {
		var types []string
		for _, o := range doc.Cells[1].Outputs {
			types = append(types, o.Type)
		}
		if strings.Join(types, " ") != "display_data stream" {
			t.Errorf("cell 2's outputs %v, want the display and the print: %s", types, b)
		}
	}
	filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if strings.Contains(d.Name(), "sqlite") || strings.Contains(d.Name(), "history") {
			t.Errorf("history on disk: %s", path)
		}
		return nil
	})
}

// IPython 9's history keeps every cell's outputs (what it prints, displays
// and returns) for %notebook, in memory, for the session's life: 2,000
// cells of one 50 KB figure grew the runner by 257 MiB. It keeps the last
// 32 MiB of them; older ones keep their text/plain, or a note.
func TestFullIPythonModeHistoryIsBounded(t *testing.T) {
	needIPython(t)
	p := start(t, startOpts{env: []string{"EVALHOST_IPYTHON=1"}})
	c := p.run("import os\nfrom IPython.display import publish_display_data\nh = get_ipython().history_manager\n" +
		"def size(v):\n    return sum(map(len, v)) if isinstance(v, list) else len(v)\nhasattr(h, 'outputs')")
	if text(t, wantResultFrame(t, c).Bundle, "text/plain") != "True" {
		t.Skip("IPython 8 keeps no outputs in its history")
	}
	wantError(t, p.run("raise ValueError(os.urandom(1 << 17).hex())"), "ValueError")
	// 20 cells of 2.25 MiB: a display, a print and a result each.
	for i := 0; i < 20; i++ {
		wantOK(t, p.run("publish_display_data({'image/png': os.urandom(1 << 19).hex(), 'text/plain': 'img'})\n"+
			"print(os.urandom(1 << 19).hex())\nos.urandom(1 << 17).hex()"))
	}
	c = p.run("kept = sum(size(v) for outs in h.outputs.values() for o in outs for v in o.bundle.values())\n" +
		"print(kept <= 32 << 20, max(map(size, h.exceptions[2].values())) < 5000)\n" +
		"for n in (3, 22):\n" +
		"    print(n, [(o.output_type, sorted(o.bundle), max(map(size, o.bundle.values())) < 1000) for o in h.outputs[n]])")
	wantOK(t, c)
	want := "True True\n" +
		"3 [('display_data', ['text/plain'], True), ('out_stream', ['stream'], True), ('execute_result', ['text/plain'], True)]\n" +
		"22 [('display_data', ['image/png', 'text/plain'], False), ('out_stream', ['stream'], False), ('execute_result', ['text/plain'], False)]\n"
	if c.stdout != want {
		t.Errorf("history kept\n%s\nwant\n%s", c.stdout, want)
	}
}
