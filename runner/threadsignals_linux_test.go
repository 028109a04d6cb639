package runner

import (
	"os/exec"
	"testing"
)

// TestBlockedSignalWaitsForTheMainThread: a signal sent to the process
// while the cell's (main) thread blocks it stays pending until unblocked,
// as in python3, which has no other thread to take it. Had one of the
// runner's threads taken it, the handler would run at once, inside the
// block: the cell's, and the runner's own (wire's _dup2_over).
func TestBlockedSignalWaitsForTheMainThread(t *testing.T) {
	const code = "import os, signal\ngot = []\n" +
		"signal.signal(signal.SIGUSR1, lambda *a: got.append(1))\n" +
		"signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n" +
		"os.kill(os.getpid(), signal.SIGUSR1)\n" +
		"def pending():\n    for line in open('/proc/self/status'):\n" +
		"        if line.startswith('ShdPnd:'):\n            return int(line.split()[1], 16) >> (signal.SIGUSR1 - 1) & 1\n" +
		// Whichever comes first: the signal pending, or its handler run
		// (each pass makes a call, where handlers run).
		"while not got and not pending():\n    pass\n" +
		"print(got, pending())\n" +
		"signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})\nprint(got)\n"
	want, err := exec.Command(python(t), "-c", code).CombinedOutput()
	if err != nil || string(want) != "[] 1\n[1]\n" {
		t.Fatalf("python3: %q, %v", want, err)
	}
	p := start(t, startOpts{})
	if r := p.run(code); r.stdout != string(want) || r.done().Status != "ok" {
		t.Fatalf("stdout %q, want python3's %q; stderr %q", r.stdout, want, r.stderr)
	}
}
