package runner

import (
	"os/exec"
	"testing"
)

// TestBlockedSignalWaitsForTheMainThread: a signal sent to the process
// while the cell's (main) thread blocks it stays pending until unblocked or
// waited for, as in python3, which has no other thread to take it. Had one
// of the runner's threads taken it, a handler would run at once, inside the
// block (the cell's, and the runner's own: wire's _dup2_over), and one left
// at its default would end the runner where sigwait should return it.
func TestBlockedSignalWaitsForTheMainThread(t *testing.T) {
	const block = "import os, signal\n" +
		"signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n" +
		"os.kill(os.getpid(), signal.SIGUSR1)\n"
	for _, c := range []struct{ name, code, want string }{
		{"a handler runs once it is unblocked",
			"import signal\ngot = []\nsignal.signal(signal.SIGUSR1, lambda *a: got.append(1))\n" + block +
				"def pending():\n    for line in open('/proc/self/status'):\n" +
				"        if line.startswith('ShdPnd:'):\n            return int(line.split()[1], 16) >> (signal.SIGUSR1 - 1) & 1\n" +
				// Whichever comes first: the signal pending, or its handler
				// run (each pass makes a call, where handlers run).
				"while not got and not pending():\n    pass\n" +
				"print(got, pending())\n" +
				"signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})\nprint(got)\n",
			"[] 1\n[1]\n"},
		{"sigwait takes one left at its default",
			block + "print(signal.Signals(signal.sigwait({signal.SIGUSR1})).name)\n",
			"SIGUSR1\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := exec.Command(python(t), "-c", c.code).CombinedOutput()
			if err != nil || string(want) != c.want {
				t.Fatalf("python3: %q, %v; want %q", want, err, c.want)
			}
			p := start(t, startOpts{})
			if r := p.run(c.code); r.stdout != c.want || r.done().Status != "ok" {
				t.Fatalf("stdout %q, want python3's %q; stderr %q", r.stdout, c.want, r.stderr)
			}
		})
	}
}
