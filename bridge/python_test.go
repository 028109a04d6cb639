package bridge

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/runner"
)

// python runs a script with the bridge's environment, as an interpreter that
// evalhost started would see it, and decodes the JSON it prints.
func python(t *testing.T, b *testBridge, session, run string, args ...string) map[string]any {
	t.Helper()
	py := testkit.Python(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = append(os.Environ(), EnvURL+"="+b.url, EnvToken+"="+b.token, EnvSession+"="+session, EnvRun+"="+run)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	if strings.Contains(string(out), b.token) || strings.Contains(stderr.String(), b.token) {
		t.Errorf("python saw the token in a reply: %s", out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("python printed %q: %v", out, err)
	}
	return m
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// golden compares what a Python script printed with testdata/NAME.golden.
func golden(t *testing.T, name string, got map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	testkit.Golden(t, filepath.Join("testdata", name+".golden"), b)
}

// The wire contract from Python's urllib: a call, a tool error, a wrong
// token, a stale run.
func TestPythonURLLib(t *testing.T) {
	b := start(t, echoTools, Options{})
	b.RunHook("s1", "r1-0", true)
	defer b.RunHook("s1", "r1-0", false)
	golden(t, "python_urllib", python(t, b, "s1", "r1-0", "testdata/e2e_urllib.py"))
}

// The proposed prelude helper: tool.NAME and tool("NAME"), ToolError, 20
// threads, asyncio.to_thread, a stale run, missing variables.
func TestPythonHelper(t *testing.T) {
	b := start(t, echoTools, Options{})
	b.RunHook("s1", "r1-0", true)
	defer b.RunHook("s1", "r1-0", false)
	got := python(t, b, "s1", "r1-0", "testdata/e2e_helper.py", helperFile(t))
	golden(t, "python_helper", got)
	// Not left to the golden file alone: each thread got its own answer.
	for i, v := range got["threads"].([]any) {
		if v != float64(i) {
			t.Errorf("thread %d got %v", i, v)
		}
	}
}

// A kept-alive connection the server closed while idle is replaced, not
// reported as a failure.
func TestPythonHelperReconnectsAfterIdleClose(t *testing.T) {
	b := start(t, echoTools, Options{IdleTimeout: 50 * time.Millisecond})
	b.RunHook("s1", "r1", true)
	defer b.RunHook("s1", "r1", false)
	script := `import json, sys, time
exec(open(sys.argv[1]).read())
first = tool.echo(i=1)["args"]["i"]
time.sleep(0.5)
print(json.dumps({"values": [first, tool.echo(i=2)["args"]["i"]]}))`
	got := python(t, b, "s1", "r1", "-c", script, helperFile(t))
	if g := asJSON(got["values"]); g != `[1,2]` {
		t.Errorf("values = %s, want [1,2]", g)
	}
}

// helperFile writes the runner's prelude, which holds the tool helper that
// cells use, so these tests exercise the shipped helper, not a copy.
func helperFile(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "prelude.py")
	if err := os.WriteFile(path, []byte(runner.Prelude()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// The shipped helper writes its whole body before reading: an argument over
// the limit must raise ToolError with the bridge's 413 message, not a broken
// pipe.
func TestPythonHelperOversizedArgs(t *testing.T) {
	b := start(t, echoTools, Options{MaxBody: 4096})
	b.RunHook("s1", "r1", true)
	defer b.RunHook("s1", "r1", false)
	script := `import json, sys
exec(open(sys.argv[1]).read())
try:
    tool.echo(x="a" * (32 << 20))
    err = None
except ToolError as e:
    err = str(e)
print(json.dumps({"error": err, "after": tool.echo(i=1)["args"]["i"]}))`
	got := python(t, b, "s1", "r1", "-c", script, helperFile(t))
	if e, _ := got["error"].(string); !strings.Contains(e, "over the 4096-byte limit") {
		t.Errorf("error = %q, want the 413 message", got["error"])
	}
	if got["after"] != float64(1) {
		t.Errorf("the next call got %v, want 1", got["after"])
	}
}
