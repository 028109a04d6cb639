package runner

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const rewriterProbe = `import ast, json, sys, warnings
warnings.simplefilter("ignore")
g = {"_core": None, "__name__": "_evalhost_ipy_rewrite"}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), g)
for line in sys.stdin:
    src = json.loads(line)
    try:
        out, err = g["transform"](src), ""
    except Exception as e:
        out, err = "", "%s: %s" % (type(e).__name__, e)
    try:
        compile(src, "<fuzz>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, True)
        valid = True
    except Exception:
        valid = False
    print(json.dumps({"out": out, "err": err, "valid": valid}), flush=True)
`

// FuzzMagicRewriter checks ipy_rewrite.transform on arbitrary cells, in one Python
// process: it never raises; Python that compiles is returned unchanged;
// outside cell magics, the line count is kept (so error line numbers hold).
func FuzzMagicRewriter(f *testing.F) {
	for _, s := range []string{
		"a % b", `"%s" % x`, "x != y", "!ls\n", "x = !ls -la", "files = %sx ls", "for i in range(3):\n    !echo {i}\n",
		"s = '''\n%time\n'''", "f\"{x!r} %d\"", "%%bash\necho hi", "(a\n % b)", "a = 1 \\\n% 2", "%", "!", "%%", "x = (\n!ls\n)",
		"if x:\n\t%time f()\nelse:\n  !true", "'unterminated\n!echo", "d[k] = !cmd", "a, b = %who_ls", "\"\"\"\n!x", "%%%", "#!shebang\n%pwd",
	} {
		f.Add(s)
	}
	exe := python(f)
	script := filepath.Join(f.TempDir(), "probe.py")
	if err := os.WriteFile(script, []byte(rewriterProbe), 0o644); err != nil {
		f.Fatal(err)
	}
	cmd := exec.Command(exe, script, filepath.Join(filepath.Dir(runnerPath), "ipy_rewrite.py"))
	in, err := cmd.StdinPipe()
	if err != nil {
		f.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		f.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		f.Fatal(err)
	}
	replies := make(chan []byte)
	done := make(chan struct{})
	go func() { // owned here; ends when the probe's stdout closes
		defer close(done)
		r := bufio.NewReaderSize(outPipe, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(replies)
				return
			}
			replies <- line
		}
	}()
	f.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		for range replies {
		}
		<-done
		cmd.Wait()
	})
	f.Fuzz(func(t *testing.T, src string) {
		src = strings.ToValidUTF8(src, "?")
		b, _ := json.Marshal(src)
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatalf("probe gone: %v", err)
		}
		var line []byte
		select {
		case l, ok := <-replies:
			if !ok {
				t.Fatalf("probe gone on %q", src)
			}
			line = l
		case <-time.After(5 * time.Second):
			t.Fatalf("transform or compile hangs on %q", src)
		}
		var r struct {
			Out   string `json:"out"`
			Err   string `json:"err"`
			Valid bool   `json:"valid"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("probe said %q: %v", line, err)
		}
		if r.Err != "" {
			t.Fatalf("transform(%q) raised %s", src, r.Err)
		}
		if r.Valid && r.Out != src {
			t.Fatalf("valid Python changed:\n%q\n->\n%q", src, r.Out)
		}
		if !strings.Contains(r.Out, "__evh__.cell_magic(") && lines(r.Out) != lines(src) {
			t.Fatalf("line count %d -> %d:\n%q\n->\n%q", lines(src), lines(r.Out), src, r.Out)
		}
	})
}

// lines counts lines as Python's str.splitlines does for the line ends a
// cell can hold.
func lines(s string) int {
	n := 0
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			n++
		}
	}
	return n
}
