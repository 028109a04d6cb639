package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parityNorms are the only differences allowed between a one-shot run and
// the same run attached to the background process (issue 16: "behave
// exactly as in a one-shot run"), each named for why it differs.
//
// One difference no norm can name, so no case here prints at exit: what the
// interpreter prints as it exits (atexit handlers, finalizers, a non-daemon
// thread's last lines) is a one-shot run's last output, but an attached
// run's interpreter lives on in its session, and prints that when the
// session ends, to no run (TestRunPrintsAtExit, TestRunSessionAtExitRuns).
var parityNorms = []struct {
	name string
	re   *regexp.Regexp
	with string
}{
	// How long a cell took is measured, never the same twice.
	{"duration", regexp.MustCompile(`after [0-9.]+(ms|s|m[0-9.]+s)\]`), "after D]"},
	{"json times", regexp.MustCompile(`"durationMs":[0-9.e+-]+`), `"durationMs":D`},
	// The interpreter's pid is another process's.
	{"json pid", regexp.MustCompile(`"pid":[0-9]+`), `"pid":P`},
	// Artifacts are numbered in the home's one store: the second run's is
	// the next.
	{"artifact id", regexp.MustCompile(`(artifact://|artifacts/)[0-9A-Za-z._-]+`), "${1}A"},
	// The notice of a first start that found a dead process's state.
	{"start notice", regexp.MustCompile(`(?m)^\[evalhost: the background process .*\]\n`), ""},
	// The session's interpreter ended with the script (its exit, a
	// signal's death): a one-shot run's went too, and python3 says
	// nothing, but the session lives on, and its next command starts
	// afresh.
	{"session ended", regexp.MustCompile(`(?m)^\[evalhost: the interpreter of session \S+ .*; its state is gone, and the next command in it starts a fresh one\]\n`), ""},
}

func normalizeParity(s string) string {
	for _, n := range parityNorms {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// runningThenSleep starts a cell that says "running" from a thread once
// the main thread sleeps, so an interrupt sent on that line lands in the
// sleep, at the same traceback line on both sides.
const runningThenSleep = "import threading, time\nthreading.Timer(0.1, print, ('running',), {'flush': True}).start()\n"

// sigintAfter sends SIGINT (or the case's sig) each time stdout has shown
// one more of these lines, in order: "running" starts the interrupts,
// "caught" is a cell's own line after the first one.
type sigintAfter []string

// childThenSleep starts a child in the interpreter's process group, says
// "running" once the main thread sleeps, and at the interrupt says whether
// the child was interrupted too ("child -2") or not ("child None").
const childThenSleep = `import subprocess, threading, time
p = subprocess.Popen(['sleep', '30'])
threading.Timer(0.1, print, ('running',), {'flush': True}).start()
try:
    time.sleep(60)
except KeyboardInterrupt:
    try:
        p.wait(timeout=1)
    except subprocess.TimeoutExpired:
        pass
    print('child', p.returncode, flush=True)
    p.kill()
    p.wait()`

// handlerThenWait sets a handler for the signal named by {sig} that
// prints "handled N", says "running" from a thread, and waits for the
// handler to have run.
const handlerThenWait = `import signal, threading, time
got = []
signal.signal(signal.{sig}, lambda n, f: (got.append(n), print('handled', n, flush=True)))
threading.Timer(0.1, print, ('running',), {'flush': True}).start()
while not got: time.sleep(0.02)
print('after', flush=True)`

// A run attached to the background process (--session) shows exactly what
// a one-shot run shows: stdout byte for byte, stderr (but for parityNorms)
// and the exit code, whatever the cell writes, how it ends, and whatever
// the flags ask. Each case runs in a session of its own, fresh like the
// one-shot run's interpreter.
func TestSessionParity(t *testing.T) {
	h := newDaemonHome(t)
	const binary = `import sys
sys.stdout.buffer.write(b"bad \xff\xfe utf-8, nul \x00, cr \r over, \x1b[31mred\x1b[0m, \x1b]8;;http://x\x07link\x1b]8;;\x07 ")
sys.stdout.flush()
sys.stderr.buffer.write(b"err \xc3 \x00\r\n")
sys.stdout.buffer.write(b"partial")`
	cases := []struct {
		name    string
		args    []string
		signals sigintAfter
		code    int
		sig     syscall.Signal // sent after each of signals' lines; 0: SIGINT
	}{
		{"print", []string{"-c", "print('hello')"}, nil, 0, 0},
		{"print without newline", []string{"-c", "print('no newline', end='')"}, nil, 0, 0},
		{"binary bytes", []string{"-c", binary}, nil, 0, 0},
		{"binary bytes from sh", []string{"--language", "sh", "-c", `printf 'sh \377\000\r\033[1mbold\033[0m'; printf 'e\377' >&2`}, nil, 0, 0},
		{"bulk binary", []string{"-c", "import sys\nb = bytes(range(256)) * 4096\nfor i in range(8):\n    sys.stdout.buffer.write(b'%d' % i + b)\n    sys.stderr.buffer.write(b'e%d \\xff\\x00 ' % i)"}, nil, 0, 0},
		{"big output", []string{"-c", "import sys\nfor i in range(20000): sys.stdout.write('%06d \\xff\\r' % i + 'x' * 90 + '\\n')"}, nil, 0, 0},
		{"stderr", []string{"-c", "import sys; print('to stderr', file=sys.stderr); print('out')"}, nil, 0, 0},
		{"exception", []string{"-c", "x = 1", "-c", "def f():\n    raise ValueError('boom')\nf()", "-c", "print('skipped')"}, nil, 1, 0},
		{"syntax error", []string{"-c", "def (:"}, nil, 1, 0},
		{"sys.exit(3)", []string{"-c", "import sys; print('before'); sys.exit(3)", "-c", "print('skipped')"}, nil, 3, 0},
		{"sys.exit(text)", []string{"-c", "import sys; sys.exit('bad input')"}, nil, 1, 0},
		{"max-output", []string{"--max-output", "200", "-c", "for i in range(500): print('line', i)"}, nil, 0, 0},
		{"max-output json", []string{"--json", "--max-output", "200", "-c", "for i in range(500): print('line', i)"}, nil, 0, 0},
		{"json two cells", []string{"--json", "-c", "print('a'); import sys; sys.stdout.buffer.write(b'\\xff\\x1b[1mz\\n')", "-c", "1/0"}, nil, 1, 0},
		{"timeout", []string{"--timeout", "1", "-c", "import time; print('t', flush=True); time.sleep(30)", "-c", "print('never')"}, nil, 124, 0},
		{"tool", []string{"--tool", "echo=cat", "--tool", "fail=echo nope >&2; exit 4",
			"-c", "print(tool.echo(a=1, b='\\xff'))", "-c", "tool.fail()"}, nil, 1, 0},
		{"first ctrl-c interrupts", []string{"-c", runningThenSleep + "time.sleep(60)", "-c", "print('later')"},
			sigintAfter{"running"}, 130, 0},
		{"second ctrl-c kills", []string{"-c", runningThenSleep + "while True:\n    try: time.sleep(60)\n    except KeyboardInterrupt: print('caught', flush=True)"},
			sigintAfter{"running", "caught"}, 130, 0},
		// Ctrl-C waits for the script's handling past the grace window, as
		// python3 does, and a kill -INT reaches the interpreter alone.
		{"ctrl-c waits for the handling", []string{"-c", runningThenSleep + "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    time.sleep(3)\n    print('saved', flush=True)",
			"-c", "print('later')"}, sigintAfter{"running"}, 0, 0},
		{"kill -INT spares the children", []string{"-c", childThenSleep}, sigintAfter{"running"}, 0, 0},
		// The background process ignores no signal its interpreters inherit.
		{"ignored signals", []string{"-c", "print([l for l in open('/proc/self/status') if l.startswith('SigIgn')])"}, nil, 0, 0},
		// A script's cells run once, as python3's statements: an
		// interpreter that ends during one ends the script (its status is
		// run's), never retried on a fresh one, and no later cell runs.
		{"os._exit(3)", []string{"-c", "import os; print('once', flush=True); os._exit(3)", "-c", "print('later')"}, nil, 3, 0},
		{"killed by SIGKILL", []string{"-c", "import os, signal; print('once', flush=True); os.kill(os.getpid(), signal.SIGKILL)", "-c", "print('later')"}, nil, 137, 0},
		{"raised KeyboardInterrupt", []string{"-c", "raise KeyboardInterrupt", "-c", "print('later')"}, nil, 130, 0},
		// The signals a one-shot run passes on reach the session's
		// interpreter: a handler of the script's runs, and without one the
		// interpreter dies of it, and run with it.
		{"SIGTERM handled", []string{"-c", strings.ReplaceAll(handlerThenWait, "{sig}", "SIGTERM")}, sigintAfter{"running"}, 0, syscall.SIGTERM},
		{"SIGUSR1 handled", []string{"-c", strings.ReplaceAll(handlerThenWait, "{sig}", "SIGUSR1")}, sigintAfter{"running"}, 0, syscall.SIGUSR1},
		{"SIGQUIT handled", []string{"-c", strings.ReplaceAll(handlerThenWait, "{sig}", "SIGQUIT")}, sigintAfter{"running"}, 0, syscall.SIGQUIT},
		{"SIGTERM unhandled", []string{"-c", runningThenSleep + "time.sleep(60)", "-c", "print('later')"}, sigintAfter{"running"}, 143, syscall.SIGTERM},
		{"SIGHUP unhandled", []string{"-c", runningThenSleep + "time.sleep(60)"}, sigintAfter{"running"}, 129, syscall.SIGHUP},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sig := c.sig
			if sig == 0 {
				sig = syscall.SIGINT
			}
			one := paritySide(t, h.cmd(append([]string{"run"}, c.args...)...), c.signals, sig)
			att := paritySide(t, h.cmd(append([]string{"run", "--session", fmt.Sprintf("parity-%d", i)}, c.args...)...), c.signals, sig)
			if one.code != c.code {
				t.Errorf("one-shot exit %d, want %d; stderr:\n%s", one.code, c.code, one.stderr)
			}
			if att.how != one.how {
				t.Errorf("attached: %s, one-shot: %s; stderr:\n%s", att.how, one.how, att.stderr)
			}
			if !bytes.Equal(att.stdout, one.stdout) {
				if strings.Contains(strings.Join(c.args, " "), "--json") || strings.Contains(strings.Join(c.args, " "), "--max-output") {
					if a, o := normalizeParity(string(att.stdout)), normalizeParity(string(one.stdout)); a != o {
						t.Errorf("stdout differs (normalised):\nattached: %q\none-shot: %q", a, o)
					}
				} else {
					t.Errorf("stdout differs:\nattached: %q\none-shot: %q", clip(att.stdout), clip(one.stdout))
				}
			}
			if a, o := normalizeParity(string(att.stderr)), normalizeParity(string(one.stderr)); a != o {
				t.Errorf("stderr differs (normalised):\nattached: %q\none-shot: %q", a, o)
			}
			a, o := spilled(t, att.stdout), spilled(t, one.stdout)
			if c.name == "max-output" && o == nil {
				t.Errorf("the one-shot run spilled nothing: %q", one.stdout)
			}
			if !bytes.Equal(a, o) {
				t.Errorf("spilled artifacts differ:\nattached: %s\none-shot: %s", clip(a), clip(o))
			}
		})
	}
}

// artifactPath finds the file a "[full output: …]" notice names.
var artifactPath = regexp.MustCompile(`\[full output: artifact://\S+ \([^)]*\) at (\S+)\]`)

// spilled is the content of the artifact stdout names, nil without one.
func spilled(t *testing.T, stdout []byte) []byte {
	m := artifactPath.FindSubmatch(stdout)
	if m == nil {
		return nil
	}
	b, err := os.ReadFile(string(m[1]))
	if err != nil {
		t.Errorf("the spilled output's artifact: %v", err)
	}
	return b
}

func clip(b []byte) string {
	if len(b) > 600 {
		return fmt.Sprintf("%q … (%d bytes)", b[:600], len(b))
	}
	return fmt.Sprintf("%q", b)
}

type parityResult struct {
	stdout, stderr []byte
	code           int    // as a shell reports it
	how            string // exit N or killed by a signal
}

// paritySide runs cmd to its end, sending a SIGINT after each awaited
// stdout line.
func paritySide(t *testing.T, cmd *exec.Cmd, signals sigintAfter, sig syscall.Signal) parityResult {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	chunks := make(chan []byte, 64)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 64<<10)
			n, err := pipe.Read(buf)
			if n > 0 {
				chunks <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	var out []byte
	deadline := time.After(60 * time.Second)
	seen := 0 // bytes of out already matched by awaited lines
	for _, line := range signals {
		for !bytes.Contains(out[seen:], []byte(line+"\n")) {
			select {
			case c, ok := <-chunks:
				if !ok {
					t.Fatalf("stdout ended before %q: %q; stderr %s", line, out, &stderr)
				}
				out = append(out, c...)
			case <-deadline:
				t.Fatalf("no %q on stdout: %q; stderr %s", line, out, &stderr)
			}
		}
		seen = bytes.Index(out[seen:], []byte(line+"\n")) + seen + len(line) + 1
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	for drained := false; !drained; {
		select {
		case c, ok := <-chunks:
			out, drained = append(out, c...), !ok
		case <-deadline:
			t.Fatalf("evalhost run did not end; stdout %q, stderr %s", out, &stderr)
		}
	}
	code, ended := 0, "exit 0"
	var exit *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &exit) {
		ws := exit.Sys().(syscall.WaitStatus)
		code, ended = shellStatus(ws), how(ws)
	} else if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return parityResult{stdout: out, stderr: stderr.Bytes(), code: code, how: ended}
}
