package tests

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Scripts whose stdout and stderr interleave, for run and python3 side by
// side. With both on one destination (2>&1, a terminal) run shows its
// cells' bytes in the kernel's order, Python's own writes flushed as
// always (stdout before stderr, a child or os.write), so in the program's
// order: python3 -u's output. plain: python3's own buffering does not
// reorder the script either (raw writes, a child alone), so plain python3
// prints the same. one, when set, is run's output on one pipe where it is
// not python3 -u's: run's stderr is line-buffered, as python3's own, so a
// partial stderr line waits for its newline (or a flush); -u writes it at
// once.
var interleavedScripts = []struct {
	name, src string
	plain     bool
	one       string
}{
	{"a child alternating", "import subprocess\n" +
		"_ = subprocess.run('for i in $(seq 20); do echo out$i; echo err$i >&2; done', shell=True)\n" +
		"for i in range(20):\n    _ = subprocess.run('echo out%d; echo err%d >&2' % (i, i), shell=True)\n", true, ""},
	{"os.write alternating", "import os\nfor i in range(20):\n    os.write(1, b'out%d\\n' % i)\n    os.write(2, b'err%d\\n' % i)\n", true, ""},
	{"print alternating", "import sys\nfor i in range(20):\n    print('out', i)\n    print('err', i, file=sys.stderr)\n", false, ""},
	{"print alternating, flushed", "import sys\nfor i in range(20):\n    print('out', i, flush=True)\n    print('err', i, file=sys.stderr)\n", true, ""},
	{"print and a child", "import subprocess\nprint('first')\n_ = subprocess.run('echo child; echo child-err >&2', shell=True)\nprint('last')\n", false, ""},
	{"logging then a child", "import logging, subprocess\nprint('p1')\nlogging.warning('careful')\n" +
		"_ = subprocess.run('echo sub', shell=True)\nprint('p2')\n", false, ""},
	{"stdout past its buffer", "import sys\nprint('x' * 5000)\nprint('E', file=sys.stderr)\nsys.stdout.write('y' * 70000)\nprint('F', file=sys.stderr)\n", false, ""},
	{"partial lines", "import sys\nsys.stdout.write('out ')\nsys.stderr.write('err ')\nprint('end')\nprint('done', file=sys.stderr)\n", false, "out end\nerr done\n"},
	{"a traceback after output", "import sys\nprint('before')\nsys.stderr.write('partial ')\nprint('err line', file=sys.stderr)\n1/0\n", false, ""},
	{"os._exit after flushed output", "import os, sys\nprint('out', flush=True)\nos.write(2, b'raw\\n')\nsys.stderr.write('err\\n')\nos._exit(3)\n", true, ""},
	{"sys.exit with a message", "import sys\nprint('out')\nsys.exit('bye')\n", false, ""},
	{"an atexit handler", "import atexit, sys\nprint('out')\n_ = atexit.register(print, 'at exit', file=sys.stderr)\n", false, ""},
	// python3 prints sys.exit's message (handle_system_exit) before the
	// exit runs its atexit handlers.
	{"sys.exit with a message, then atexit handlers", "import atexit, sys\nprint('out')\n_ = atexit.register(print, 'at exit')\n" +
		"_ = atexit.register(print, 'at exit err', file=sys.stderr)\nsys.exit('bye')\n", false, ""},
	// As FILE, a percent script's cells: the exit's message goes where an
	// earlier cell left sys.stderr, before the atexit handlers' output.
	{"sys.exit with a message in a cell before the last, sys.stderr replaced", "import atexit, sys\nprint('out')\nsys.stderr = sys.stdout\n" +
		"_ = atexit.register(print, 'at exit')\n# %%\nsys.exit('bye')\n# %%\nprint('not run')\n", false, ""},
}

// TestRunInterleavesAsPython runs each script with run and python3 -u
// side by side (and plain python3 where its buffering does not reorder):
// with stdout and stderr one pipe, their bytes and exit codes must be
// equal; apart, each stream
// must be. The scripts run as FILE, and again as -c.
func TestRunInterleavesAsPython(t *testing.T) {
	dir := t.TempDir()
	for _, s := range interleavedScripts {
		script := filepath.Join(dir, strings.ReplaceAll(s.name, " ", "_")+".py")
		if err := os.WriteFile(script, []byte(s.src), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{script}, {"-c", s.src}} {
			if args[0] == "-c" && strings.Contains(s.name, "traceback") {
				continue // python3 -c shows no source lines in a traceback; run -c does
			}
			name := s.name + "/" + map[bool]string{true: "-c", false: "FILE"}[args[0] == "-c"]
			oracles := [][]string{{"-u"}}
			if s.plain {
				oracles = append(oracles, nil)
			}
			t.Run(name+"/one pipe", func(t *testing.T) {
				got, _, code := runInterleaved(t, command(t, append([]string{"run"}, args...)...), true)
				if s.one != "" {
					if got != s.one || code != 0 {
						t.Errorf("exit %d, output (stdout and stderr as one):\n%q\nwant 0 and\n%q", code, got, s.one)
					}
					return
				}
				for _, opts := range oracles {
					want, _, pyCode := runInterleaved(t, exec.Command("python3", append(opts, args...)...), true)
					if got != want || code != pyCode {
						t.Errorf("exit %d, output (stdout and stderr as one):\n%q\npython3 %s exits %d, printing:\n%q", code, got, strings.Join(opts, " "), pyCode, want)
					}
				}
			})
			t.Run(name+"/apart", func(t *testing.T) {
				out, errOut, code := runInterleaved(t, command(t, append([]string{"run"}, args...)...), false)
				pyOut, pyErr, pyCode := runInterleaved(t, exec.Command("python3", append([]string{"-u"}, args...)...), false)
				if out != pyOut || errOut != pyErr || code != pyCode {
					t.Errorf("exit %d, stdout %q, stderr %q; python3 -u exits %d, stdout %q, stderr %q", code, out, errOut, pyCode, pyOut, pyErr)
				}
			})
		}
	}
}

// runInterleaved runs cmd without PYTHONUNBUFFERED (python3's own buffering)
// in the test's directory; one: its stdout and stderr are one os.Pipe, as
// a shell's 2>&1 makes them (else two), read whole.
func runInterleaved(t *testing.T, cmd *exec.Cmd, one bool) (stdout, stderr string, code int) {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "PYTHONUNBUFFERED=")
	cmd.Dir = t.TempDir()
	pipes := 2
	if one {
		pipes = 1
	}
	var wg sync.WaitGroup
	got := make([]bytes.Buffer, pipes)
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			cmd.Stdout, cmd.Stderr = w, w
		} else {
			cmd.Stderr = w
		}
		defer w.Close()
		wg.Go(func() {
			io.Copy(&got[i], r)
			r.Close()
		})
	}
	err := cmd.Start()
	// Only the child holds the write ends now: reading ends with its output.
	for _, w := range []any{cmd.Stdout, cmd.Stderr} {
		w.(*os.File).Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	wg.Wait()
	stdout = got[0].String()
	if !one {
		stderr = got[1].String()
	}
	return stdout, stderr, cmd.ProcessState.ExitCode()
}

// On a terminal python3 line-buffers stdout too; a child's lines, os.write
// and prints interleave there as under python3.
func TestRunInterleavesAsPythonOnATerminal(t *testing.T) {
	scripts := interleavedScripts[:4:4]
	for _, s := range interleavedScripts {
		if strings.HasPrefix(s.name, "sys.exit with a message") {
			scripts = append(scripts, s)
		}
	}
	for _, s := range scripts {
		t.Run(s.name, func(t *testing.T) {
			got, code := runInTerminal(t, []string{"PYTHONUNBUFFERED="}, "run", "-c", s.src)
			py := exec.Command("python3", "-c", s.src)
			py.Env = append(os.Environ(), "PYTHONUNBUFFERED=")
			want, pyCode := cmdInTerminal(t, py)
			if got != want || code != pyCode {
				t.Errorf("exit %d, terminal shows:\n%q\npython3 exits %d, showing:\n%q", code, got, pyCode, want)
			}
		})
	}
}

// A print still in stdout's buffer at os._exit is lost by python3 on a
// pipe; run flushes it first, in its place, as python3 -u wrote it.
func TestRunKeepsABufferedPrintAtOsExitOnOnePipe(t *testing.T) {
	src := "import os, sys\nprint('buffered')\nprint('err', file=sys.stderr)\nos._exit(3)\n"
	got, _, code := runInterleaved(t, command(t, "run", "-c", src), true)
	lost, _, _ := runInterleaved(t, exec.Command("python3", "-c", src), true)
	if lost != "err\n" {
		t.Fatalf("python3 printed %q; the test expects it to lose the buffered print", lost)
	}
	want, _, pyCode := runInterleaved(t, exec.Command("python3", "-u", "-c", src), true)
	if got != want || code != pyCode {
		t.Errorf("exit %d, output %q; want python3 -u's %d and %q", code, got, pyCode, want)
	}
}

// On one pipe (run train.py 2>&1 | tee log) a print shows while the cell
// still runs, not when a buffer fills or the script ends: the cell waits
// on its stdin until the reader has seen its progress line.
func TestRunShowsProgressLiveOnOnePipe(t *testing.T) {
	src := "import sys\nprint('progress')\nsys.stdin.read()\nprint('done')\n"
	// The cell's timeout, past the guard below, would flush it too.
	cmd := command(t, "run", "--timeout", "600", "-c", src)
	cmd.Env = append(cmd.Environ(), "PYTHONUNBUFFERED=")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	seen := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		seen <- line
	}()
	select {
	case line := <-seen:
		if line != "progress\n" {
			t.Fatalf("first line %q, want the cell's progress", line)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a timing check
		cmd.Process.Kill()
		r.Close() // ends the read
		<-seen
		t.Fatal("the progress line did not show while the cell waited")
	}
}

// run -u on one pipe writes through, as python3 -u: even the partial
// stderr line the line-buffered streams hold back (a script's one) is
// python3 -u's.
func TestRunUnbufferedOnOnePipeIsPythons(t *testing.T) {
	for _, s := range interleavedScripts {
		if s.one == "" {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			got, _, code := runInterleaved(t, command(t, "run", "-u", "-c", s.src), true)
			want, _, pyCode := runInterleaved(t, exec.Command("python3", "-u", "-c", s.src), true)
			if got != want || code != pyCode {
				t.Errorf("exit %d, output %q; python3 -u exits %d, printing %q", code, got, pyCode, want)
			}
		})
	}
}
