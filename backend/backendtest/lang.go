package backendtest

// Lang is the code the suite runs, in the language of the backend under
// test. Every cell is short and deterministic; the ones that wait print a
// line first, which the suite awaits before it acts.
type Lang struct {
	Name string
	// Print writes "out\n" to stdout and "err\n" to stderr.
	Print func(out, err string) string
	// Fail is a cell that fails without harming the interpreter.
	Fail string
	// Set stores the word "kept" in the interpreter's state; Get prints it.
	Set, Get string
	// Where prints the working directory, then the value of
	// BACKENDTEST_VAR, one per line.
	Where string
	// Args prints the arguments a request's Argv gives after its first,
	// one per line.
	Args string
	// ArgBytes prints the bytes of each argument after the first as hex,
	// one per line: what the OS would have handed the program.
	ArgBytes string
	// Path prints the module search path, one directory a line; "" for a
	// language without one.
	Path string
	// Sleep prints "sleeping" and sleeps half a minute, interruptibly.
	Sleep string
	// Ignore ignores interrupts, prints "spinning" and spins forever.
	Ignore string
	// Die prints "dying" and ends the interpreter abruptly (a signal to
	// itself), as a crash does.
	Die string
	// Merged: stderr arrives in stdout frames (a terminal merges them).
	Merged bool
}

// Python is the language of the runner and of Jupyter kernels.
var Python = Lang{
	Name: "python",
	Print: func(out, err string) string {
		return "import sys\nprint(" + pyQuote(out) + ")\nprint(" + pyQuote(err) + ", file=sys.stderr)"
	},
	Fail:     "raise ValueError('backendtest failure')",
	Set:      "backendtest_word = 'kept'",
	Get:      "print(backendtest_word)",
	Where:    "import os\nprint(os.getcwd())\nprint(os.environ.get('BACKENDTEST_VAR'))",
	Args:     "import sys\nprint(*sys.argv[1:], sep='\\n')",
	ArgBytes: "import os, sys\nprint(*[os.fsencode(a).hex() for a in sys.argv[1:]], sep='\\n')",
	Path:     "import sys\nprint(*sys.path, sep='\\n')",
	Sleep:    "import time\nprint('sleeping', flush=True)\ntime.sleep(30)",
	Ignore:   "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('spinning', flush=True)\nwhile True: pass",
	Die:      "import os, signal, sys\nprint('dying', flush=True)\nsys.stderr.flush()\nos.kill(os.getpid(), signal.SIGKILL)",
}

// Shell is the language of the persistent bash of sh cells.
var Shell = Lang{
	Name: "sh",
	Print: func(out, err string) string {
		return "echo " + shQuote(out) + "\necho " + shQuote(err) + " >&2"
	},
	Fail:     "false",
	Set:      "backendtest_word=kept",
	Get:      "echo \"$backendtest_word\"",
	Where:    "pwd -P\necho \"$BACKENDTEST_VAR\"",
	Args:     "printf '%s\\n' \"$@\"",
	ArgBytes: "for a; do printf '%s' \"$a\" | od -An -v -tx1 | tr -d ' \\n'; echo; done",
	Sleep:    "echo sleeping\nsleep 30",
	Ignore:   "trap '' INT\necho spinning\nwhile :; do :; done",
	Die:      "echo dying\nkill -KILL $$",
	Merged:   true,
}

func pyQuote(s string) string { return "'" + s + "'" }
func shQuote(s string) string { return "'" + s + "'" }
