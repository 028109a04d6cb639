package tests

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A gateway kernel's death is told as the gateway told it (its status
// report), never as the exit code the gateway does not report (-1), in
// every message and notice of the cell: a batch run's, a retry's, a second
// death's.
func TestGatewayDeathSaysWhy(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "kernel_gateway, ipykernel", "jupyter_kernel_gateway ipykernel")
	home := t.TempDir()
	env := []string{"EVALHOST_HOME=" + home}
	t.Cleanup(func() {
		stop := exec.Command(binary, "gateway", "stop")
		stop.Env = append(os.Environ(), env...)
		_ = stop.Run()
	})
	const why = "the gateway reported kernel status"
	t.Run("run", func(t *testing.T) {
		cmd := exec.Command(binary, "run", "--backend", "gateway", "-c", "import os; os._exit(3)")
		cmd.Env = append(os.Environ(), env...)
		out, _, code := runCaptured(t, cmd, true)
		if code != 1 || !strings.Contains(out, "[interpreter died: "+why) || strings.Contains(out, "exit code -1") {
			t.Errorf("exit %d, output:\n%s\nwant 1 and the gateway's report, not exit code -1", code, out)
		}
	})
	t.Run("serve", func(t *testing.T) {
		c := startServeEnv(t, env, "--backend", "gateway")
		c.send(map[string]any{"op": "eval", "id": "d", "session": "S", "cells": []any{py("import os; os._exit(3)")}})
		lines := c.result("d")
		var stderr string
		for _, m := range ofType(lines, "stderr") {
			stderr += m["data"].(string)
		}
		if !strings.Contains(stderr, "[interpreter died ("+why) || !strings.Contains(stderr, "retrying the cell once") ||
			!strings.Contains(stderr, "[interpreter died twice: "+why) || strings.Contains(stderr, "exit code -1") {
			t.Errorf("stderr %q; want the gateway's report in the retry's notice and the second death's", stderr)
		}
		ends := ofType(lines, "cell_end")
		if len(ends) != 1 || !strings.Contains(ends[0]["message"].(string), "interpreter died twice: "+why) {
			t.Errorf("cell ends %v; want one whose message has the gateway's report", ends)
		}
	})
}
