package tests

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestMCPPythonClient drives `evalhost mcp` with a client nobody here
// wrote: the Python mcp package's (testdata/mcp_client.py, which checks
// the same cases as TestMCPEval and TestMCPNotebook).
func TestMCPPythonClient(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "mcp, anyio", "mcp")
	cmd := exec.Command("python3", "testdata/mcp_client.py", binary, t.TempDir())
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcp_client.py: %v\n%s", err, out)
	}
	for _, check := range []string{"initialize", "tools/list", "two cells", "cancel", "timeout", "death", "plot", "20 MB", "notebook", "malformed"} {
		if !strings.Contains(string(out), "ok "+check+"\n") {
			t.Errorf("check %q did not pass:\n%s", check, out)
		}
	}
}

// TestMCPPythonClientHTTP drives `evalhost mcp --http` with the Python mcp
// package's streamable-HTTP client (testdata/mcp_http_client.py): a call
// the server cannot read fails alone, and the session serves on.
func TestMCPPythonClientHTTP(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "mcp.client.streamable_http, anyio", "mcp")
	url, token := startMCPHTTP(t)
	out, err := exec.Command("python3", "testdata/mcp_http_client.py", url, token).CombinedOutput()
	if err != nil {
		t.Fatalf("mcp_http_client.py: %v\n%s", err, out)
	}
	for _, check := range []string{"initialize", "eval", "too long"} {
		if !strings.Contains(string(out), "ok "+check+"\n") {
			t.Errorf("check %q did not pass:\n%s", check, out)
		}
	}
}
