package tests

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// An environment the system would not start the interpreter with (execve's
// E2BIG) is said as such, naming the variable and what to do, not as
// "argument list too long": in serve's start of a session (a variable of
// 3 MB in the client's environ, beyond the 128 KiB one may hold), and in
// run --session's (variables of 180 KB in all, beyond the 128 KiB that a
// background process started under a stack limit of 512 KiB may pass).
func TestEnvironmentTooLarge(t *testing.T) {
	t.Run("serve", func(t *testing.T) {
		var in strings.Builder
		for i, lang := range []string{"py", "sh"} {
			line, _ := json.Marshal(map[string]any{"op": "eval", "id": fmt.Sprint(i), "session": "big",
				"environ": []string{"PATH=/usr/bin:/bin", "LC_BIG=" + strings.Repeat("a", 3_000_000)},
				"cells":   []map[string]any{{"language": lang, "code": "print(1)"}}})
			in.Write(append(line, '\n'))
		}
		out, errOut, code := runEvalhost(t, in.String(), "serve")
		const want = "the environment is too large to start a program with: variable LC_BIG is 3000007 bytes, and one may hold at most 131071; unset it or make it smaller"
		if code != 0 || strings.Count(out, `"type":"cell_end"`) != 2 || strings.Count(out, `"message":"cannot start the interpreter: start interpreter: run `) != 2 ||
			strings.Count(out, want) != 6 || strings.Contains(out, "argument list too long") {
			t.Errorf("exit %d; want two cells' ends saying %q (stderr, output and message); got\n%s\nstderr:\n%s", code, want, out, errOut)
		}
	})
	t.Run("run --session", func(t *testing.T) {
		h := newDaemonHome(t)
		first := exec.Command("sh", "-c", `ulimit -s 512 && exec "$0" "$@"`, h.bin, "run", "--session", "small", "-c", "print(1)")
		first.Env, first.Dir = h.cmd().Env, h.home
		if out, errOut, code := runCaptured(t, first, false); code != 0 || out != "1\n" {
			t.Fatalf("starting the background process under ulimit -s 512: exit %d, %q, %s", code, out, errOut)
		}
		for _, lang := range []string{"py", "sh"} {
			cmd := h.cmd("run", "--session", "big", "--language", lang, "-c", "print(1)")
			v := strings.Repeat("v", 60_000)
			cmd.Env = append(cmd.Env, "LC_A="+v, "LC_B="+v, "LC_C="+v)
			out, errOut, code := runCaptured(t, cmd, false)
			const want = "the environment and command line are too large to start a program with: "
			if code != 1 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "(the largest: variable LC_") ||
				!strings.Contains(errOut, "more than the 131072 bytes process ") || strings.Contains(errOut, "argument list too long") {
				t.Errorf("%s: exit %d, stdout %q, stderr\n%s\nwant 1 and %q", lang, code, out, errOut, want)
			}
		}
	})
}
