package runner

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
)

func TestCellMagics(t *testing.T) {
	dir := t.TempDir()
	p := start(t, startOpts{dir: dir})
	for _, tc := range []struct {
		name, code, stdout, result string
		check                      func(t *testing.T, c cellResult)
	}{
		{name: "bash", code: "%%bash\nx=bash\necho \"$x ${BASH_VERSION:+yes}\"", stdout: "bash yes\n"},
		{name: "sh", code: "%%sh\necho one\necho two >&2", stdout: "one\n", check: func(t *testing.T, c cellResult) {
			if c.stderr != "two\n" {
				t.Errorf("stderr %q", c.stderr)
			}
		}},
		{name: "writefile", code: "%%writefile notes.txt\nline 1\nline 2\n", stdout: "Writing notes.txt\n"},
		{name: "writefile again overwrites", code: "%%writefile notes.txt\nnew\n", stdout: "Overwriting notes.txt\n"},
		{name: "writefile -a appends", code: "%%writefile -a notes.txt\nmore\n", stdout: "Appending to notes.txt\n", check: func(t *testing.T, c cellResult) {
			b, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
			if err != nil || string(b) != "new\nmore\n" {
				t.Errorf("notes.txt = %q (%v)", b, err)
			}
		}},
		{name: "time returns the last value", code: "%%time\nx = 20\nx + 22", result: "42", check: func(t *testing.T, c cellResult) {
			if !strings.Contains(c.stdout, "Wall time: ") {
				t.Errorf("stdout %q", c.stdout)
			}
		}},
		{name: "timeit with setup on the magic line", code: "%%timeit -n 3 -r 2 data = list(range(100))\nsorted(data)", check: func(t *testing.T, c cellResult) {
			if !strings.Contains(c.stdout, " per loop (mean ± std. dev. of 2 runs, 3 loops each)") {
				t.Errorf("stdout %q", c.stdout)
			}
		}},
		{name: "capture keeps everything out of the cell", code: "%%capture cap\nprint('out')\nimport sys; print('err', file=sys.stderr)\ndisplay({'text/html': '<b>x</b>'}, raw=True)\n'last'",
			check: func(t *testing.T, c cellResult) {
				if c.stdout != "" || c.stderr != "" {
					t.Errorf("captured cell printed %q %q", c.stdout, c.stderr)
				}
				for _, f := range c.frames {
					if f.Type == frames.TypeDisplay || f.Type == frames.TypeResult {
						t.Errorf("captured cell sent %+v", f)
					}
				}
			}},
		{name: "capture object", code: "(cap.stdout, cap.stderr, [sorted(o.data) for o in cap.outputs])",
			result: "('out\\n', 'err\\n', [['text/html', 'text/plain'], ['text/plain']])"},
		{name: "capture show replays", code: "cap.show()", stdout: "out\n", check: func(t *testing.T, c cellResult) {
			if c.stderr != "err\n" {
				t.Errorf("stderr %q", c.stderr)
			}
			if d, ok := c.first(frames.TypeDisplay); !ok || text(t, d.Bundle, "text/html") != "<b>x</b>" {
				t.Errorf("no replayed display: %+v", c.frames)
			}
		}},
		{name: "html cell", code: "%%html\n<p>hi</p>", check: func(t *testing.T, c cellResult) {
			d, ok := c.first(frames.TypeDisplay)
			if !ok || text(t, d.Bundle, "text/html") != "<p>hi</p>" {
				t.Errorf("frames %+v", c.frames)
			}
		}},
		{name: "python3 cell in a subprocess", code: "%%python3\nimport os\nprint('child', os.getpid() != " + "__PID__" + ")", stdout: "child True\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := strings.ReplaceAll(tc.code, "__PID__", strconv.Itoa(p.cmd.Process.Pid))
			c := p.run(code)
			wantOK(t, c)
			if tc.check == nil || tc.stdout != "" {
				if c.stdout != tc.stdout {
					t.Errorf("stdout %q, want %q", c.stdout, tc.stdout)
				}
			}
			if tc.result != "" {
				wantResult(tc.result)(t, c)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// interruptEscape runs a shell escape that prints "sleeping" (and what
// follows on its line) once it is under way, then sends SIGINT to the
// runner's group as the host does. It returns that line.
func interruptEscape(t *testing.T, p *proc, id, code string) string {
	t.Helper()
	p.seq++
	p.send(map[string]any{"id": id, "code": code})
	p.out.waitFor(t, "sleeping")
	out := p.out.snapshot()
	line, _, _ := strings.Cut(out[strings.Index(out, "sleeping"):], "\n")
	p.interrupt()
	return line
}

// A shell escape is interrupted with the cell: SIGINT to the group (as the
// host sends it) ends the child and the cell is cancelled.
func TestShellEscapeInterrupt(t *testing.T) {
	p := start(t, startOpts{})
	interruptEscape(t, p, "c-int", "!echo sleeping; sleep 30")
	t0 := time.Now()
	c := p.collect("c-int", nil)
	if !c.done().Cancelled {
		t.Errorf("done %+v, want cancelled", c.done())
	}
	// A hang guard, not a timing (load stretches one): the child sleeps
	// 30 s, which an interrupt that missed it would wait out.
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("interrupt took %v: the child was not interrupted", d)
	}
	wantResult("'alive'")(t, p.run("'alive'"))
}

// A shell escape whose shell outlives the interrupt (it ignores SIGINT, as
// bash in effect does for a command it starts just after one) is ended with
// the command it waits for, instead of leaving that running, orphaned, with
// the cell's output pipes.
func TestShellEscapeInterruptEndsWhatItStarted(t *testing.T) {
	p := start(t, startOpts{})
	line := interruptEscape(t, p, "c-int2", "!trap '' INT; sleep 30 & echo sleeping $!; wait")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "sleeping")))
	if err != nil {
		t.Fatalf("line %q: want the sleep's pid", line)
	}
	if c := p.collect("c-int2", nil); !c.done().Cancelled {
		t.Errorf("done %+v, want cancelled", c.done())
	}
	if !leakcheck.Gone(pid, 10*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the escape's sleep (pid %d) outlived the cancelled cell", pid)
	}
}

// %pip install of a wheel built here, offline, into a target directory.
func TestPipInstallLocalWheel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pip (seconds)")
	}
	dir := t.TempDir()
	wheel := filepath.Join(dir, "evhdemo-0.1-py3-none-any.whl")
	buildWheel(t, wheel, "evhdemo", "0.1", map[string]string{"evhdemo/__init__.py": "ANSWER = 42\n"})
	target := filepath.Join(dir, "site")
	p := start(t, startOpts{dir: dir})
	c := p.run("%pip install --no-index --no-deps --disable-pip-version-check --target " + target + " " + wheel)
	wantOK(t, c)
	if !strings.Contains(c.stdout, "Successfully installed evhdemo-0.1") {
		t.Errorf("pip output %q %q", c.stdout, c.stderr)
	}
	wantResult("42")(t, p.run("import sys; sys.path.insert(0, "+pyStr(target)+")\nimport evhdemo\nevhdemo.ANSWER"))
}

func pyStr(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// buildWheel writes a minimal pure-Python wheel: the files, METADATA, WHEEL, RECORD.
func buildWheel(t *testing.T, path, name, version string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	info := name + "-" + version + ".dist-info/"
	all := map[string]string{
		info + "METADATA": "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n",
		info + "WHEEL":    "Wheel-Version: 1.0\nGenerator: evalhost-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	for k, v := range files {
		all[k] = v
	}
	var record strings.Builder
	for k, v := range all {
		w, err := z.Create(k)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(v))
		record.WriteString(k + ",,\n")
	}
	record.WriteString(info + "RECORD,,\n")
	w, err := z.Create(info + "RECORD")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

// %%capture runs its body as IPython's run_cell does: an error in it is
// shown (not captured) and the magic's cell is still ok with its name set,
// as ipykernel does; a body ending in ';' sets no name and takes an older
// one away (IPython's semicolon_at_end_of_expression).
func TestCaptureLikeIPython(t *testing.T) {
	inBothModes(t, func(t *testing.T, p *proc) {
		for _, tc := range []struct {
			name, code, result string
			ename              string // the body's error, shown
		}{
			{name: "a body that raises", code: "%%capture failed\nprint('before')\n1/0", ename: "ZeroDivisionError"},
			{name: "keeps what it printed before", code: "failed.stdout", result: "'before\\n'"},
			{name: "an older name", code: "quiet = 1"},
			{name: "a body ending in ;", code: "%%capture quiet\nx = 42;  # note"},
			{name: "leaves no name", code: "'quiet' in dir(), x", result: "(False, 42)"},
			{name: "; inside the body only", code: "%%capture loud\na = 1; b = 2\nb"},
			{name: "sets the name", code: "len(loud.outputs)", result: "1"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := p.run(tc.code)
				wantOK(t, c)
				if tc.ename != "" {
					wantError(t, c, tc.ename)
				} else {
					wantNo(frames.TypeError)(t, c)
				}
				if c.stdout != "" {
					t.Errorf("stdout %q", c.stdout)
				}
				if tc.result != "" {
					wantResult(tc.result)(t, c)
				}
			})
		}
	})
}
