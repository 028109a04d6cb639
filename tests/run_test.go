package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func runEvalhost(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := command(t, args...)
	cmd.Stdin = strings.NewReader(stdin)
	return runCaptured(t, cmd, false)
}

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{"percent cells share state", "x = 41\n# %%\nx + 1\n", []string{"run", "-"}, 0, []string{"42\n"}, nil},
		{"code flags", "", []string{"run", "-c", "y = 2", "-c", "print(y * 21)"}, 0, []string{"42\n"}, nil},
		{"error stops later cells", "print('one')\n# %%\nundefined_name\n# %%\nprint('three')\n", []string{"run", "-"}, 1,
			[]string{"one\n"}, []string{"NameError", `File "<stdin>", line 3`}},
		{"syntax error shows the caret", "x = (1,\n", []string{"run", "-"}, 1, nil, []string{"SyntaxError", "^"}},
		{"input fails fast, as python3 -'s", "input('name? ')\n", []string{"run", "-"}, 1, nil, []string{"EOFError: EOF when reading a line"}}, // python3 -'s: stdin carried the script
		{"timeout exits 124", "while True: pass\n", []string{"run", "--timeout", "1", "-"}, 124, nil,
			[]string{"Command timed out after 1 seconds", "timed out"}},
		{"shell cells", "# %% [sh]\ncd /tmp\n# %% [sh]\npwd\n", []string{"run", "-"}, 0, []string{"/tmp"}, nil},
		{"death is reported by --json", "import os\nos.kill(os.getpid(), 9)\n", []string{"run", "--json", "-"}, 137,
			[]string{"interpreter died: signal: killed; not retried"}, nil},
		{"os._exit is the script's exit", "import os\nos._exit(3)\n", []string{"run", "-"}, 3, nil, nil},
		{"usage error", "", []string{"run"}, 2, nil, []string{"nothing to run"}},
		{"notebook hint", "", []string{"run", "x.ipynb"}, 2, nil, []string{"x.ipynb is a notebook: run it with \"evalhost nb run x.ipynb\""}},
		{"crlf script runs its shell cells", "x = 1\r\n# %% [sh]\r\nls -d /tmp\r\n", []string{"run", "-"}, 0, []string{"/tmp\n"}, nil},
		{"byte order mark before a marker", "\ufeff# %% [sh]\necho shell $BASH_VERSINFO\n", []string{"run", "-"}, 0, []string{"shell "}, nil},
		{"language alias applies to the cells", "", []string{"run", "--language", "bash", "-c", "echo hi from bash"}, 0,
			[]string{"hi from bash"}, nil},
		{"bad flag value is reported", "", []string{"run", "--timeout", "abc", "-c", "1"}, 2, nil,
			[]string{`invalid argument "abc" for "--timeout"`, `evalhost run --help`}},
		{"unknown flag is reported", "", []string{"run", "--bogus", "-c", "1"}, 2, nil, []string{"unknown flag: --bogus"}},
		{"serve reports an unknown flag", "", []string{"serve", "--bogus"}, 2, nil, []string{"evalhost serve: unknown flag: --bogus"}},
		{"gateway help", "", []string{"gateway", "--help"}, 0, []string{"Usage: evalhost gateway status|stop"}, nil},
		{"doctor help", "", []string{"doctor", "--help"}, 0, []string{"Usage: evalhost doctor [flags]"}, nil},
		{"serve refuses an argument", "", []string{"serve", "requests.ndjson"}, 2, nil, []string{`unexpected argument "requests.ndjson"`}},
		{"negative timeout is a usage error", "", []string{"run", "--timeout", "-5", "-c", "1"}, 2, nil, []string{"--timeout -5: want seconds"}},
		{"only markers run nothing", "# %%\n# %% [markdown]\n# notes\n", []string{"run", "-"}, 0, nil,
			[]string{"stdin has no code cells; nothing ran"}},
		{"tool given twice", "", []string{"run", "--tool", "a=cat", "--tool", "a=cat", "-c", "1"}, 2, nil, []string{"--tool a is given twice"}},
		{"doctor reports a bad flag", "", []string{"doctor", "--bogus"}, 2, nil, []string{"evalhost doctor: unknown flag: --bogus"}},
		{"an image that cannot be saved still shows its text",
			"# %%\nclass B:\n    def _repr_mimebundle_(self, **kw):\n        return {'image/png': 'not base64!', 'text/plain': 'B as text'}\nB()\n",
			[]string{"run", "-"}, 0, []string{"B as text"}, []string{"image/png image not saved"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			stdout, stderr, code := runEvalhost(t, tt.stdin, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout %q lacks %q", stdout, w)
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stdout+stderr, "runner.py") || strings.Contains(stdout+stderr, "core.py") {
				t.Errorf("output shows runner internals:\n%s%s", stdout, stderr)
			}
			noticesSaidOnce(t, stderr)
			t.Logf("took %s", time.Since(start).Round(time.Millisecond))
		})
	}
}

// noticesSaidOnce fails when a "[...]" line the host printed (a start
// failure, a death) is repeated by another line, such as the cell's status.
func noticesSaidOnce(t *testing.T, stderr string) {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	for i, l := range lines {
		msg, ok := strings.CutPrefix(l, "[")
		if msg, ok = strings.CutSuffix(msg, "]"); !ok || len(msg) < 10 {
			continue
		}
		for j, o := range lines {
			if j != i && strings.Contains(o, msg) {
				t.Errorf("%q is said twice:\n%s", msg, stderr)
				return
			}
		}
	}
}

// run --json writes serve's lines (one encoder makes both), without ids.
func TestRunJSON(t *testing.T) {
	stdout, stderr, code := runEvalhost(t, "x = 41\nprint('hi')\n# %%\nx + 1\n", "run", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var types []string
	var lastCount float64
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		typ := m["type"].(string)
		types = append(types, typ)
		// A run has one request: no line carries an id, and the
		// interpreter's run ids (with their nonce) never show.
		if id, ok := m["id"]; ok {
			t.Errorf("%s line carries id %v: %s", typ, id, sc.Text())
		}
		if _, ok := m["durationMs"]; !ok && (typ == "end" || typ == "cell_end") {
			t.Errorf("%s line without durationMs: %s", typ, sc.Text())
		}
		if typ != "end" {
			if _, ok := m["cell"]; !ok {
				t.Errorf("line without a cell index: %s", sc.Text())
			}
		}
		if typ == "done" {
			lastCount = m["executionCount"].(float64)
		}
		if typ == "result" && m["bundle"].(map[string]any)["text/plain"] != "42" {
			t.Errorf("result = %v, want 42", m["bundle"])
		}
	}
	got := strings.Join(types, ",")
	want := "ready,started,stdout,done,cell_end,started,result,done,cell_end,end"
	if got != want {
		t.Fatalf("line types\n got %s\nwant %s", got, want)
	}
	if lastCount != 2 {
		t.Fatalf("second done has executionCount %v, want 2", lastCount)
	}
}

// --max-output shows each cell's bounded tail with a notice that points,
// once, at the artifact that holds every byte.
func TestRunMaxOutput(t *testing.T) {
	stdout, stderr, code := runEvalhost(t, "", "run", "--max-output", "2000", "-c", "for i in range(10000): print(i)")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(stdout) > 4000 || !strings.Contains(stdout, "lines elided") || !strings.Contains(stdout, "9999\n") {
		t.Fatalf("bounded view (%d bytes):\n%s", len(stdout), stdout)
	}
	m := regexp.MustCompile(`\[full output: artifact://\S+ \(.*?\) at (.+)\]\n`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no artifact notice in:\n%s", stdout)
	}
	path := m[1]
	if n := strings.Count(stdout+stderr, path); n != 1 {
		t.Errorf("the artifact path is printed %d times, want once:\n%s%s", n, stdout, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if string(data) != want.String() {
		t.Fatalf("artifact %s holds %d bytes, want all %d", path, len(data), want.Len())
	}
}

// PI_PY, the reference's tool-exposure override, turns cell languages off;
// serve's hello says which are on.
func TestToolModePIPY(t *testing.T) {
	tests := []struct {
		name, piPy, stdin string
		args              []string
		wantCode          int
		want              string // in stdout+stderr
	}{
		{"bash only refuses Python", "bash", "", []string{"run", "-c", "print(1)"}, 1, "Python cells are turned off by PI_PY=bash"},
		{"bash only runs shell", "0", "# %% [sh]\necho shell-ok\n", []string{"run", "-"}, 0, "shell-ok"},
		{"py only refuses shell", "py", "# %% [sh]\necho no\n", []string{"run", "-"}, 1, "shell cells are turned off by PI_PY=py"},
		{"mix runs both", "mix", "print('py-ok')\n# %% [sh]\necho sh-ok\n", []string{"run", "-"}, 0, "sh-ok"},
		{"bad value is a usage error", "sometimes", "", []string{"run", "-c", "1"}, 2, `PI_PY="sometimes": use 0 or bash`},
		{"serve says which languages are on", "1", `{"op":"shutdown"}` + "\n", []string{"serve"}, 0, `"languages":["py"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PI_PY", tt.piPy)
			stdout, stderr, code := runEvalhost(t, tt.stdin, tt.args...)
			if code != tt.wantCode || !strings.Contains(stdout+stderr, tt.want) {
				t.Fatalf("exit %d (want %d); output lacks %q:\n%s%s", code, tt.wantCode, tt.want, stdout, stderr)
			}
		})
	}
}

// PI_PYTHON_IPC_TRACE=1 logs every frame the interpreter sends, bounded.
func TestIPCTrace(t *testing.T) {
	t.Setenv("PI_PYTHON_IPC_TRACE", "1")
	stdout, stderr, code := runEvalhost(t, "", "run", "-c", "print('x' * 5000)")
	if code != 0 || !strings.Contains(stdout, strings.Repeat("x", 5000)) {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	for _, want := range []string{`msg="ipc recv"`, `\"type\":\"started\"`, `\"type\":\"done\"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("trace lacks %s:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, strings.Repeat("x", 1000)) {
		t.Errorf("a traced frame was not bounded:\n%.2000s", stderr)
	}
}

// evalhost's own artifacts directory keeps a week of spilled output,
// pruned as a spill ends and as a long-lived process starts (serve here);
// a command that spills nothing does not list it. A PI_ARTIFACTS_DIR is the
// caller's and is never pruned.
func TestArtifactsPruned(t *testing.T) {
	old := time.Now().Add(-30 * 24 * time.Hour)
	spill := []string{"run", "--max-output", "5", "-c", "print('x' * 100)"}
	for _, tt := range []struct {
		name     string
		args     []string
		stdin    string
		callers  bool // PI_ARTIFACTS_DIR points at the directory
		wantLeft []string
	}{
		{"own directory, a spill", spill, "", false, []string{"3.eval.log", "5.eval.log"}}, // 4 is no longer the newest
		{"own directory, serve starts", []string{"serve"}, `{"op":"shutdown"}` + "\n", false, []string{"3.eval.log", "4.eval.log"}},
		{"own directory, nothing spilled", []string{"run", "-c", "1"}, "", false, []string{"1.eval.log", "2.png", "3.eval.log", "4.eval.log"}},
		{"caller's directory", spill, "", true, []string{"1.eval.log", "2.png", "3.eval.log", "4.eval.log", "5.eval.log"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, "artifacts")
			os.MkdirAll(dir, 0o755)
			for name, isOld := range map[string]bool{"1.eval.log": true, "2.png": true, "3.eval.log": false, "4.eval.log": true} {
				p := filepath.Join(dir, name)
				os.WriteFile(p, []byte("x"), 0o644)
				if isOld {
					os.Chtimes(p, old, old)
				}
			}
			cmd := command(t, tt.args...)
			cmd.Env = append(cmd.Env, "EVALHOST_HOME="+home, "PI_ARTIFACTS_DIR=")
			if tt.callers {
				cmd.Env = append(cmd.Env, "PI_ARTIFACTS_DIR="+dir)
			}
			cmd.Stdin = strings.NewReader(tt.stdin)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tt.args, err, out)
			}
			ents, _ := os.ReadDir(dir)
			var left []string
			for _, e := range ents {
				left = append(left, e.Name())
			}
			if strings.Join(left, " ") != strings.Join(tt.wantLeft, " ") {
				t.Fatalf("left %q, want %q", left, tt.wantLeft)
			}
		})
	}
}

// TestRunPassesBytesThrough: run's live output is the program's bytes, as
// python prints them (a pipeline or a file expects them); --json and
// --max-output, which are read as text, still get them sanitised.
func TestRunPassesBytesThrough(t *testing.T) {
	code := "import sys\n" +
		"sys.stdout.buffer.write(bytes(range(256)) + b'\\x1b[31mred\\x1b[0m\\r\\n\\xe2\\x82')\n" +
		"sys.stdout.flush()\n" +
		"n = sys.stderr.buffer.write(b'err \\xff\\x1b]8;;u\\x07\\n')\n"
	raw := make([]byte, 0, 300)
	for i := range 256 {
		raw = append(raw, byte(i))
	}
	want := string(raw) + "\x1b[31mred\x1b[0m\r\n\xe2\x82"
	stdout, stderr, exit := runEvalhost(t, "", "run", "-c", code)
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, stderr)
	}
	if stdout != want {
		t.Errorf("stdout %q\nwant   %q", stdout, want)
	}
	if stderr != "err \xff\x1b]8;;u\x07\n" {
		t.Errorf("stderr %q", stderr)
	}
	for _, args := range [][]string{{"--json"}, {"--max-output", "10000"}} {
		stdout, _, _ := runEvalhost(t, "", append([]string{"run", "-c", code}, args...)...)
		if strings.Contains(stdout, "\x1b") || strings.Contains(stdout, "\xff") {
			t.Errorf("run %s: output not sanitised: %q", args, stdout)
		}
	}
}

// A display whose text/plain is no string is shown from its HTML, with no
// escape sequence left in it, raw or as an entity: `run` writes it to a
// terminal, where an OSC 52 would set the clipboard. It is sanitised as
// the dump is: a sequence goes whole, not only its control bytes.
func TestRunShowsHTMLDisplaysInert(t *testing.T) {
	code := `display({'text/plain': 1, 'text/html': '<b>a</b>\x1b]52;c;aGk=\x07b &#27;[2J\x9bc'}, raw=True)`
	out, errOut, exit := runCaptured(t, command(t, "run", "-c", code), false)
	if exit != 0 || out != "ab c\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want the HTML's text without its escapes", exit, out, errOut)
	}
}

// A display of HTML alone (the runner's text/plain is then "") shows the
// HTML's text, as a display with no text/plain does: live, and in the
// bounded tail --max-output prints.
func TestRunShowsHTMLOnlyDisplays(t *testing.T) {
	code := `display({'text/html': '<b>hi</b> <table><tr><td>a</td><td>b</td></tr></table>'}, raw=True)`
	for _, args := range [][]string{nil, {"--max-output", "10000"}} {
		out, errOut, exit := runCaptured(t, command(t, append([]string{"run", "-c", code}, args...)...), false)
		if exit != 0 || out != "hi\na\tb\n" {
			t.Errorf("run %s: exit %d, stdout %q, stderr %q; want the HTML's text", args, exit, out, errOut)
		}
	}
}

// HTML above the inline limit that stayed in the display (here the store
// cannot be made: artifacts is a file) is named live, as in the bounded
// tail, not turned into a megabyte of text.
func TestRunNamesLargeHTMLDisplays(t *testing.T) {
	code := `display({'text/html': '<p>' + 'x'*(1<<20) + '</p>'}, raw=True)`
	for _, args := range [][]string{nil, {"--max-output", "10000"}} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "artifacts"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := command(t, append([]string{"run", "-c", code}, args...)...)
		cmd.Env = append(cmd.Env, "EVALHOST_HOME="+home)
		out, errOut, exit := runCaptured(t, cmd, false)
		if exit != 0 || !strings.HasSuffix(out, "\n[text/html 1.0 MiB]\n") && out != "[text/html 1.0 MiB]\n" {
			t.Errorf("run %s: exit %d, stdout %.200q, stderr %q; want the HTML named", args, exit, out, errOut)
		}
	}
}
