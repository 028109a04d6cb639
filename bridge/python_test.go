package bridge

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// python runs a script with the bridge's environment, as an interpreter that
// evalhost started would see it, and decodes the JSON it prints.
func python(t *testing.T, b *testBridge, session, run string, args ...string) map[string]any {
	t.Helper()
	py := realPython(t)
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

var pythonPath = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	return strings.TrimSpace(string(out)), err
})

// realPython resolves python3 once, past version-manager shims that cost
// seconds per start on a loaded machine.
func realPython(t testing.TB) string {
	t.Helper()
	py, err := pythonPath()
	if err != nil || py == "" {
		t.Skipf("python3 not usable: %v", err)
	}
	return py
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPythonURLLib(t *testing.T) {
	b := start(t, echoTools, Options{})
	b.RunHook("s1", "r1-0", true)
	defer b.RunHook("s1", "r1-0", false)
	got := python(t, b, "s1", "r1-0", "testdata/e2e_urllib.py")
	tests := []struct{ key, want string }{
		{"ok", `[200,{"ok":true,"value":{"args":{"n":[1,2.5,null],"path":"x.txt","s":"héllo ☃"},"name":"echo","run":"r1-0","session":"s1"}}]`},
		{"tool_error", `[200,{"error":"no such file: x.txt","ok":false}]`},
		{"wrong_token", `[403,{"error":"wrong bridge token; use the PI_TOOL_BRIDGE_TOKEN of this evalhost process","ok":false}]`},
		{"stale_run", `[409,{"error":"run \"gone\" is not executing in session \"s1\" now; tools can be called only from a running cell (stale EVALHOST_RUN or PI_TOOL_BRIDGE_SESSION?)","ok":false}]`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if g := asJSON(got[tt.key]); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
	}
}

func TestPythonHelper(t *testing.T) {
	b := start(t, echoTools, Options{})
	b.RunHook("s1", "r1-0", true)
	defer b.RunHook("s1", "r1-0", false)
	got := python(t, b, "s1", "r1-0", "testdata/e2e_helper.py", "testdata/tool_helper.py")
	threads := make([]int, 20)
	for i := range threads {
		threads[i] = i
	}
	tests := []struct{ key, want string }{
		{"attr", `{"args":{"x":1},"name":"echo","run":"r1-0","session":"s1"}`},
		{"call", `{"args":{"name":"n","y":[true]},"name":"echo","run":"r1-0","session":"s1"}`},
		{"tool_error", `"no such file: x.txt"`},
		{"threads", asJSON(threads)},
		{"asyncio", `[0,1,2]`},
		{"stale", `"run \"stale\" is not executing in session \"s1\" now; tools can be called only from a running cell (stale EVALHOST_RUN or PI_TOOL_BRIDGE_SESSION?)"`},
		{"unavailable", `"tool bridge is unavailable: PI_TOOL_BRIDGE_TOKEN not set (tools work only in cells run by evalhost)"`},
		{"private", `"AttributeError"`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if g := asJSON(got[tt.key]); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
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
	got := python(t, b, "s1", "r1", "-c", script, "testdata/tool_helper.py")
	if g := asJSON(got["values"]); g != `[1,2]` {
		t.Errorf("values = %s, want [1,2]", g)
	}
}
