package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/internal/reaper"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/params"
	"github.com/evalhost/evalhost/percent"
	"github.com/evalhost/evalhost/sessions"
)

type runFlags struct {
	profile       cpuProfile
	code          []string
	timeout       int
	cwd           string
	python        string
	json          bool
	keepGoing     bool
	maxOutput     int
	imagesDir     string
	lang          string
	session       string
	detach        bool
	ipython       bool
	tools         []string
	grace         time.Duration
	graceSet      bool // --grace given: it bounds Ctrl-C's wait too
	magics        percent.Magics
	params        *params.Params
	argv          []string    // the cells' sys.argv (commandLine)
	file          string      // their __file__
	module        string      // -m's MODULE: the one cell runs it as python3 -m does
	stdin         *os.File    // a one-shot run's stdin for its Python cells (scriptStdin)
	tty           bool        // --tty: stdin, a terminal, is the script's (run_tty.go)
	stdinTerminal bool        // stdin is --tty's pseudo-terminal, the interpreter's controlling terminal
	stdinWithheld string      // why run's stdin is not the cells' (a terminal without --tty): withheldTerminal
	ttyRelay      *ttyRelay   // --tty's relay, for job control
	terminal      runTerminal // what its cells learn of a terminal it shows them on
	envList       []string    // --env as given
	env           map[string]string
	py            pyOpts // python3's interpreter options
	merged        bool   // stdout and stderr are one destination: one pipe for a Python cell's fd 1 and 2 (run_merge.go)
	backendFlags
}

const runUsage = `Usage: evalhost run [FLAGS] [-c CODE]... [FILE | -] [ARG...]
       evalhost run [FLAGS] -m MODULE [ARG...]

Runs cells in one session: the -c cells, or FILE's (stdin's for -), a
percent-format script (Jupytext, VS Code, Spyder) split on "# %%" lines as
Jupytext reads it: "# %% [sh]" is a shell cell; [markdown], [md] and [raw]
cells, and cells tagged active-py, never run; "# %% Title tags=[\"x\"]
key=value" gives a title and metadata (shown by --json). Parameters (-p,
-r, -f, -y, -P) go into a cell tagged injected-parameters right after the
cell tagged parameters, or first, as papermill injects them.

Each cell shows its last expression's value, as a notebook's does. A
FILE (or stdin) without any cell marker (and without Jupytext's header)
is a plain script: it runs as python3 runs it, showing no expression's
value and saving no figure it leaves open (plt.show() still saves them).

The command line reads as python3's: run's flags come first, and
everything after FILE is the script's, flags and "--" included. The
cells see sys.argv as python3 gives it: [FILE, ARG...] (["-", ARG...]
for stdin; ["-c", ARG...] with -c cells, which take no FILE), __file__
FILE's absolute path (on 3.8 FILE as given, as its python3 has it); a
shell cell's $1... are the ARGs:
evalhost run --timeout 60 train.py data.csv --epochs 3.

-m MODULE runs a module as python3 -m does (runpy): a package's
__main__, sys.argv [MODULE's file, ARG...], the cwd first on sys.path,
and, with --session, its globals kept in the session. -m ends run's
flags as FILE does: evalhost run -m json.tool --indent 2 < data.json.
A FILE that is a directory or a zip application runs its __main__ as
python3 DIR and python3 APP.pyz do.

python3's options go among run's flags, before FILE, -c or -m, and act
on the Python cells as under python3: -u -B -O -OO -b -bb -E -s -S -I -q,
-W ARG, -X OPT, combined as python3 takes them (-uB, -Werror, -Xdev):
evalhost run -u -W error -X dev train.py. Not with --session (the
session's interpreter may already run) nor the gateway backend (a
kernel runs as its kernelspec says); run's -P is a parameter, not
python3's -P.
`

// newRunFlagSet declares run's flags into f; the returned bool is
// --jupytext-magics, whose default (auto) is told by fs.Changed.
func newRunFlagSet(f *runFlags, stderr io.Writer) (*pflag.FlagSet, *bool) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	// run's flags end at FILE (or -): what follows is the script's, as
	// after python3's FILE.
	fs.SetInterspersed(false)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nFlags:\n%s", runUsage, fs.FlagUsages())
	}
	repeatedVarP(fs, &f.code, "code", "c", "a cell of code (repeatable; each is one cell)")
	fs.IntVar(&f.timeout, "timeout", 30, "seconds per cell, 1..600; 0: no limit, as python3 has none (not with --session)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory of the session (default: the current one)")
	fs.StringVar(&f.python, "python", "", "python interpreter to use (default: venv, then python3 on PATH)")
	fs.BoolVar(&f.json, "json", false, "write NDJSON: every frame tagged with its cell, then a summary line per cell")
	fs.BoolVar(&f.keepGoing, "keep-going", false, "run the remaining cells after a failed one")
	fs.IntVar(&f.maxOutput, "max-output", 0, "show at most this many bytes of each cell's output (its tail), spilling the rest to an artifact; 0 streams everything live")
	fs.StringVar(&f.imagesDir, "images-dir", "", "where images are saved, each as a new file (default: a new private directory under the system temp dir); refused if another user could plant or replace files in it")
	fs.StringVar(&f.lang, "language", "py", "language of cells without a [sh] tag: py or sh")
	fs.StringVar(&f.session, "session", "run", "keep the session NAME of this directory (or --cwd) in the background process, so the next run --session NAME there sees its state (see evalhost sessions; evalhost kill NAME ends it); without it each run is a fresh interpreter")
	// A one-shot run's own session is named "run" inside; it is not a
	// default NAME a user could reach, so --help does not show it as one.
	fs.Lookup("session").DefValue = ""
	fs.BoolVar(&f.detach, "detach", false, "with --session: a cell still running at its --timeout goes on as a job in the background process (see evalhost jobs) instead of being stopped")
	f.backendFlags.register(fs)
	fs.DurationVar(&f.grace, "grace", 2*time.Second, "after a timeout, how long a cell may take to stop before its interpreter is killed; after Ctrl-C a cell takes its time within its --timeout, as under python3 (a second Ctrl-C kills it), unless --grace is given")
	repeatedVarP(fs, &f.envList, "env", "", "NAME=VALUE sets a variable for the cells, NAME passes this environment's value on (repeatable); otherwise they see only an allow-list of it")
	repeatedVarP(fs, &f.tools, "tool", "", "NAME=COMMAND: cells call tool.NAME(**args); COMMAND gets the args as JSON on stdin, its stdout is the value (repeatable)")
	fs.BoolVar(&f.tty, "tty", false, "give the script this terminal (stdin) as python3 has it: input(), getpass and /dev/tty wait for you; the cells' --timeout is then no limit unless given (not with --session or -)")
	fs.BoolVar(&f.ipython, "ipython", false, "run Python cells through IPython's InteractiveShell (needs IPython installed)")
	magics := fs.Bool("jupytext-magics", false, "run magics Jupytext commented out (# %matplotlib, # !cmd) as magics; default: when the script has Jupytext's header")
	registerParamFlags(fs)
	f.py.register(fs)
	f.profile.register(fs)
	return fs, magics
}

func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	holdQuitEarly()
	defer handOverQuit()
	defer reaper.DropSpare() // one package prestart's init started, or parseRun's Prestart, unused
	var f runFlags
	line, code, ok := parseRun(&f, args, stdin, stdout, stderr)
	if !ok {
		return code
	}
	stopProfile, ok := f.profile.start("run", stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfile()
	cells, code, ok := readRunCells(line.cl.source, f, stdin, stdout, stderr)
	if !ok {
		return code
	}
	growOutPipe(stdout)
	growOutPipe(stderr)
	if line.attached {
		return runAttached(cells, f, bridge.CommandTools(line.tools), stdout, stderr)
	}
	var tty *ttyRelay
	var err error
	if f.tty {
		if tty, err = startTTY(&f, stdin.(*os.File)); err != nil {
			fmt.Fprintf(stderr, "evalhost run: %v\n", err)
			return exitFailed
		}
		defer tty.close() // after runCells: the interpreters have exited
	} else if f.stdin, f.stdinWithheld = scriptStdin(stdin); f.stdin != nil {
		defer f.stdin.Close()
	}
	f.ttyRelay = tty
	if !f.json && f.maxOutput == 0 { // the cells' bytes go to stdout and stderr as written
		f.terminal = terminalOf(stdout, stderr)
		f.merged = oneDestination(stdout, stderr)
	}
	return runCells(cells, f, line.tools, tty.synced(stdout), tty.synced(stderr), logger)
}

// runLine is what run's command line says beyond its flags (runFlags).
type runLine struct {
	cl       commandLine
	tools    map[string]string // --tool NAME=COMMAND
	attached bool              // --session: the background process runs the cells
}

// parseRun reads and checks run's command line into f, before any input is
// read: a mistake is reported at once, not after the user has typed (or
// piped) the cells. ok is false when run must exit with code, reported on
// stderr. Unless --session, it starts the spare reaper early: its own
// start (a second Go runtime) overlaps with the checks, the reading of the
// cells and the interpreter's resolution. Package prestart's init has
// usually started it already, before main.
func parseRun(f *runFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) (line runLine, code int, ok bool) {
	usage := func(err error, hint string) (runLine, int, bool) {
		fmt.Fprintf(stderr, "evalhost run: %v\n%s", err, hint)
		return runLine{}, exitUsage, false
	}
	fs, jupytextMagics := newRunFlagSet(f, stderr)
	args, mod, err := cutModule(fs, args)
	if err != nil {
		return usage(err, "")
	}
	rest, paramFlags, err := takeParamFlags(fs, args, true)
	if err != nil {
		return usage(err, missingValueHint(fs, args))
	}
	args = rest
	if code, ok := parseFlagsHinted(fs, args, stdout, stderr, scriptFlagsHint); !ok {
		return runLine{}, code, false
	}
	line.attached = fs.Changed("session")
	if !line.attached {
		reaper.Prestart()
	}
	if fs.Changed("jupytext-magics") {
		f.magics = map[bool]percent.Magics{true: percent.MagicsOn, false: percent.MagicsOff}[*jupytextMagics]
	}
	if f.params, err = buildParams(paramFlags); err != nil {
		return usage(err, paramsHint(err))
	}
	if err := checkRunFlags(f, fs); err != nil {
		return usage(err, "")
	}
	if !line.attached && !resolvedGateway(f.choice()) && !f.json && f.maxOutput == 0 {
		// The program's bytes go out as it writes them, as python3's; not
		// --json's frames nor --max-output's tail, which unbuffered
		// streams would only split into a frame per write.
		f.env = withPythonUnbuffered(f.env, lookupEnv)
	}
	if line.tools, err = parseToolFlags(f.tools); err != nil {
		return usage(err, "")
	}
	if line.cl, err = parseRunCommandLine(f, fs.Args(), mod); err != nil {
		return usage(relativeFileHint(err, line.cl.source, f.cwd != ""), "")
	}
	if !line.attached && f.cwd == "" {
		// Said at once, before the cells are read, rather than as "getwd"
		// from the registry.
		if _, err := runDir(""); err != nil {
			return usage(err, "")
		}
	}
	if err := checkValueTookFile(line.cl, *f, paramFlags); err != nil {
		return usage(err, "")
	}
	f.argv, f.file, f.module = line.cl.argv, line.cl.file, line.cl.module
	if f.tty {
		if err := checkTTY(*f, line.cl.source, stdin, line.attached); err != nil {
			return usage(err, "")
		}
		if !fs.Changed("timeout") {
			f.timeout = 0 // a person answers at their pace, as to python3
		}
	}
	return line, exitOK, true
}

// parseRunCommandLine is run's command line after its flags: SCRIPT,
// -c's code or -m's MODULE, and their arguments.
func parseRunCommandLine(f *runFlags, pos []string, mod *moduleRun) (commandLine, error) {
	cl, err := parseCommandLine(pos, len(f.code) > 0, mod)
	if err != nil {
		return cl, err
	}
	if cl.module != "" && f.params != nil {
		return cl, errors.New("parameters (-p, -r, -f, -y, -P) and -m: a module has no parameters cell; give it arguments after MODULE")
	}
	if isMainPath(cl.source) {
		// python3 DIR, python3 APP.pyz: its __main__ module, run as -m runs one.
		switch {
		case f.params != nil:
			return cl, errMainPathParams
		case resolvedGateway(f.choice()):
			return cl, fmt.Errorf("%s is a directory or zip application, which only the runner backend runs (python3's __main__ from it); drop --backend gateway", cl.source)
		}
		cl.module, cl.source = mainPathModule, ""
	}
	return cl, nil
}

// checkRunFlags checks the flags that need no input, normalising the
// language and capping the timeout.
func checkRunFlags(f *runFlags, fs *pflag.FlagSet) error {
	lang, ok := sessions.ParseLanguage(f.lang)
	if !ok {
		return fmt.Errorf("--language must be py (or python) or sh (or bash, shell), not %q", f.lang)
	}
	f.lang = lang
	if err := refuseNegative(fs, "max-output", "grace"); err != nil {
		return err
	}
	if f.timeout < 0 || f.timeout > int(sessions.MaxTimeout/time.Second) {
		// Refused, not cut to 600: a long cell stopped part way is lost work.
		return fmt.Errorf("--timeout %d: want seconds from 1 to 600, or 0 for no limit", f.timeout)
	}
	if f.cwd != "" {
		if err := checkCwdFlag(f.cwd); err != nil {
			return err
		}
		if _, err := absDir(f.cwd); err != nil {
			// A relative DIR (--cwd .) in a removed directory: said as
			// runDir says it, not as "getwd" from the registry.
			return fmt.Errorf("--cwd %s: %w; %s, or give DIR's absolute path", trustdir.Shown(f.cwd), err, cdElsewhere(err))
		}
	}
	if f.imagesDir != "" {
		if err := checkImagesDir(f.imagesDir); err != nil {
			return err
		}
	}
	env, err := parseEnvFlags(f.envList, lookupEnv)
	if err != nil {
		return err
	}
	f.env = env
	attached := fs.Changed("session")
	if err := badSessionName(f.session); attached && err != nil {
		hint := ""
		if f.session == "" {
			hint = `, e.g. --session work ("evalhost sessions" lists them); leave --session out for a one-shot run`
		}
		return fmt.Errorf("--session %s: %v%s", shownName(f.session), err, hint)
	}
	f.graceSet = fs.Changed("grace")
	if f.detach && !attached {
		return errors.New("--detach needs --session NAME: the job runs on in the background process, which a one-shot run does not have")
	}
	if msg := attachedUnsupported(*f, fs.Changed("grace")); attached && msg != "" {
		return errors.New(msg)
	}
	if opts := f.py.given(); opts != "" {
		if resolvedGateway(f.choice()) {
			return fmt.Errorf("python3's options (%s) are not available with the gateway backend: a kernel's interpreter runs as its kernelspec says; use --backend runner", opts)
		}
	}
	return nil
}
