package tests

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMCPPythonClient drives `evalhost mcp` with a client nobody here
// wrote: the Python mcp package's (testdata/mcp_client.py, which checks
// the same cases as TestMCPEval and TestMCPNotebook).
func TestMCPPythonClient(t *testing.T) {
	if out, err := exec.Command("python3", "-c", "import mcp, anyio").CombinedOutput(); err != nil {
		t.Skipf("the Python mcp package is not installed (scripts/test-deps.sh installs it): %v: %s", err, out)
	}
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
