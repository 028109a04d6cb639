package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes holds every command to the README's exit-code table. The
// signal codes (130, 141) are exercised by the interrupt tests.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.ipynb")
	writeNotebook(t, nb, "1/0")
	okNB := filepath.Join(dir, "ok.ipynb")
	writeNotebook(t, okNB, "x = 1")
	file := filepath.Join(dir, "file.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	plain, script := filepath.Join(dir, "plain.py"), filepath.Join(dir, "script.py")
	os.WriteFile(plain, []byte("x = 1\n"), 0o644)
	os.WriteFile(script, []byte("# %%\nx = 1\n"), 0o644)
	loose := filepath.Join(dir, "loose-home")
	os.Mkdir(loose, 0o700)
	os.Chmod(loose, 0o777) // past the umask
	tests := []struct {
		name   string
		args   []string
		env    []string
		code   int
		stderr string // substring
	}{
		{"no command", nil, nil, 2, "Usage:"},
		{"unknown command", []string{"frob"}, nil, 2, `unknown command "frob"`},
		{"version", []string{"version"}, nil, 0, ""},
		{"help", []string{"help"}, nil, 0, ""},

		{"run ok", []string{"run", "-c", "1"}, nil, 0, ""},
		{"run failed cell", []string{"run", "-c", "1/0"}, nil, 1, "ZeroDivisionError"},
		{"run timeout", []string{"run", "--timeout", "1", "-c", "while True: pass"}, nil, 124, "timed out"},
		// The run's --timeout, not the script, ended it: sys.exit in its
		// finally is no python3 exit.
		{"run timeout ended by sys.exit", []string{"run", "--timeout", "1", "-c", "import sys, time\ntry:\n    time.sleep(30)\nfinally:\n    sys.exit(4)"}, nil, 124, "timed out"},
		{"run bad flag", []string{"run", "--bogus"}, nil, 2, "unknown flag"},
		{"run negative --max-output", []string{"run", "--max-output", "-5", "-c", "1"}, nil, 2, "--max-output -5: want 0 or more"},
		{"run negative --grace", []string{"run", "--grace", "-1s", "-c", "1"}, nil, 2, "--grace -1s: want 0 or more"},
		{"nb run negative --grace", []string{"nb", "run", okNB, "--grace", "-1s"}, nil, 2, "--grace -1s: want 0 or more"},
		{"serve negative --max-sessions", []string{"serve", "--max-sessions", "-1"}, nil, 2, "--max-sessions -1: want 0 or more"},
		{"mcp negative --idle-timeout", []string{"mcp", "--idle-timeout", "-1m"}, nil, 2, "--idle-timeout -1m0s: want 0 or more"},
		{"run -p took the file", []string{"run", "-p", "alpha", file}, nil, 2, "took the file " + file},
		{"run nothing to run", []string{"run"}, nil, 2, "nothing to run"},
		{"run missing file", []string{"run", filepath.Join(dir, "missing.py")}, nil, 2, "cannot open " + filepath.Join(dir, "missing.py") + ": no such file"},
		{"run cwd is a file", []string{"run", "--cwd", file, "-c", "1"}, nil, 2, "not a directory"},
		{"run cwd missing", []string{"run", "--cwd", filepath.Join(dir, "nope"), "-c", "1"}, nil, 2, "--cwd " + filepath.Join(dir, "nope") + ": no such directory"},
		{"run endless input", []string{"run", "/dev/zero"}, nil, 2, "/dev/zero is larger than 64 MiB"},
		{"run bad PI_PY", []string{"run", "-c", "1"}, []string{"PI_PY=perl"}, 2, "PI_PY"},
		{"run empty --session", []string{"run", "--session", "", "-c", "1"}, nil, 2, `--session "": a session's name is any text but empty`},
		{"kill empty name", []string{"kill", ""}, nil, 2, `kill "": a session's name is any text but empty`},
		{"kill name too long", []string{"kill", strings.Repeat("x", 5000)}, nil, 2, "a session's name is 5000 bytes; at most 4096"},
		{"run --session too long", []string{"run", "--session", strings.Repeat("x", 5000), "-c", "1"}, nil, 2, "a session's name is 5000 bytes; at most 4096"},
		{"kill no NAME", []string{"kill"}, nil, 2, "give one session NAME"},
		{"kill --cwd with --all", []string{"kill", "--all", "--cwd", dir, "s"}, nil, 2, "--cwd and --all exclude each other"},
		{"kill no such session", []string{"kill", "s"}, nil, 1, `no session "s"`},
		{"kill --cwd no such session", []string{"kill", "--cwd", filepath.Join(dir, "gone"), "s"}, nil, 1, `no session "s" in ` + filepath.Join(dir, "gone")},
		{"sessions NAME", []string{"sessions", "s"}, nil, 2, "evalhost kill NAME"},
		{"mcp negative --http-session-timeout", []string{"mcp", "--http-session-timeout", "-1s"}, nil, 2, "--http-session-timeout -1s: want 0 or more"},
		// A flag of the transport mcp does not serve would do nothing.
		{"mcp --token without --http", []string{"mcp", "--token", strings.Repeat("t", 32)}, nil, 2, "--token applies only to the HTTP transport; add --http ADDR, or drop it"},
		{"mcp --http-session-timeout without --http", []string{"mcp", "--http-session-timeout", "5m"}, nil, 2, "--http-session-timeout applies only to the HTTP transport"},
		// (An address mcp would refuse later: were --max-line let through, the row ends, not serves.)
		{"mcp --max-line with --http", []string{"mcp", "--http", "192.0.2.1:1", "--max-line", "1000"}, nil, 2, "--max-line applies only to the stdio transport"},
		{"kill loose home", []string{"kill", "s"}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},
		{"sessions loose home", []string{"sessions"}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},
		{"jobs loose home", []string{"jobs"}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},
		{"jobs JOB loose home", []string{"jobs", "s-1"}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},
		{"run empty --session=", []string{"run", "--session=", "-c", "1"}, nil, 2, `--session "": a session's name is any text but empty`},
		{"run bad backend", []string{"run", "--backend", "kernel", "-c", "1"}, nil, 2, "unknown backend"},
		{"run loose home", []string{"run", "-c", "1"}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},

		{"nb no command", []string{"nb"}, nil, 2, "Usage:"},
		{"nb view ok", []string{"nb", "view", okNB}, nil, 0, ""},
		{"nb view missing", []string{"nb", "view", filepath.Join(dir, "missing.ipynb")}, nil, 1, "no such file"},
		{"nb view not a notebook", []string{"nb", "view", file}, nil, 1, "invalid notebook JSON"},
		{"nb edit with the cell as arguments", []string{"nb", "edit", okNB, "0", "x"}, nil, 2, "the cell is --cell N, its source --content TEXT"},
		{"nb edit without --cell", []string{"nb", "edit", okNB, "--content", "x"}, nil, 2, "--cell N is required"},
		{"nb run ok", []string{"nb", "run", okNB, "-o", filepath.Join(dir, "out.ipynb")}, nil, 0, ""},
		{"nb run failed cell", []string{"nb", "run", nb, "-o", filepath.Join(dir, "out2.ipynb")}, nil, 1, "cell 0: error"},
		{"nb run bad cells", []string{"nb", "run", nb, "--cells", "7"}, nil, 2, "the notebook has cells 0..0"},
		{"nb run cwd is a file", []string{"nb", "run", nb, "--cwd", file}, nil, 2, "not a directory"},
		{"nb run a file that is no notebook", []string{"nb", "run", file, "-o", filepath.Join(dir, "out5.ipynb")}, nil, 2, "is not a notebook: nb run reads"},
		{"nb run a plain script", []string{"nb", "run", plain, "-o", filepath.Join(dir, "out6.ipynb")}, nil, 2, "it is a plain script, not a notebook"},
		{"nb run --inplace of a script", []string{"nb", "run", script, "--inplace"}, nil, 2, "a percent script, which holds no outputs"},
		{"nb run IN OUT, as papermill", []string{"nb", "run", okNB, filepath.Join(dir, "out4.ipynb")}, nil, 2, "-o " + filepath.Join(dir, "out4.ipynb")},
		{"nb run loose home", []string{"nb", "run", okNB, "-o", filepath.Join(dir, "out3.ipynb")}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},

		{"serve argument", []string{"serve", "extra"}, nil, 2, "unexpected argument"},
		{"serve loose home", []string{"serve"}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},
		{"gateway no command", []string{"gateway"}, nil, 2, "Usage:"},
		{"gateway loose home", []string{"gateway", "status"}, []string{"EVALHOST_HOME=" + loose}, 2, "writable by group or others"},
		{"doctor argument", []string{"doctor", "x"}, nil, 2, "takes no arguments"},
		{"doctor --cwd missing", []string{"doctor", "--cwd", filepath.Join(dir, "missing")}, nil, 2, "--cwd " + filepath.Join(dir, "missing") + ": no such directory"},
		{"doctor --cwd a file", []string{"doctor", "--cwd", file}, nil, 2, "not a directory"},
		{"doctor loose home", []string{"doctor"}, []string{"EVALHOST_HOME=" + loose}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := command(t, tt.args...)
			cmd.Env = append(cmd.Env, tt.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.Output()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.code, stdout, &stderr)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", &stderr, tt.stderr)
			}
		})
	}
}
