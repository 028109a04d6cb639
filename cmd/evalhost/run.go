package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/reaper"
	"github.com/evalhost/evalhost/internal/timeline"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/params"
	"github.com/evalhost/evalhost/percent"
	"github.com/evalhost/evalhost/pysource"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
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

// readRunCells reads the cells from source (or -c's code, or stdin); ok is
// false when run must exit with code, reported.
func readRunCells(source string, f runFlags, stdin io.Reader, stdout, stderr io.Writer) (cells []sessions.Cell, code int, ok bool) {
	cells, err := collectCells(source, f, stdin, stderr)
	var syntax *pysource.SyntaxError
	if errors.As(err, &syntax) {
		// python3's refusal of the file, in its words and with its status.
		fmt.Fprint(stderr, syntax.Text)
		return nil, exitFailed, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return nil, exitUsage, false
	}
	if len(cells) == 0 {
		// A script of only markers, markdown or blank lines: like an empty
		// Python file, nothing to do is not a failure, but say so.
		fmt.Fprintf(stderr, "evalhost run: %s has no code cells; nothing ran\n", sourceName(source))
		if f.json {
			newJSONRenderer(stdout).end(sessions.Result{Status: sessions.StatusOK, FailedCell: -1})
		}
		return nil, exitOK, false
	}
	return cells, exitOK, true
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
			return fmt.Errorf("--cwd %s: %w; cd to a directory that exists, or give DIR's absolute path", trustdir.Shown(f.cwd), err)
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

// codeFile is the name python3 -c compiles its code under, which
// tracebacks, warnings and SyntaxErrors show.
const codeFile = "<string>"

func sourceName(arg string) string {
	if arg == "-" {
		return "stdin"
	}
	return arg
}

// collectCells reads the cells from -c flags or from source (FILE, or
// stdin for "-"), with the parameters' cell where papermill would put it.
func collectCells(source string, f runFlags, stdin io.Reader, stderr io.Writer) ([]sessions.Cell, error) {
	var cells []percent.Cell
	for _, code := range f.code {
		cell := sessions.Cell{Language: f.lang, Code: code}
		if f.lang == sessions.LangPython {
			// python3 -c's code is "<string>" (each -c cell's, from its
			// line 1), whose source linecache has only from 3.13 on.
			cell.File, cell.Line = codeFile, 1
		}
		cells = append(cells, percent.Cell{Cell: cell})
	}
	switch {
	case source != "":
		awaitQuitHeld() // stdin, a FIFO: a read that may wait for long
		src, err := readSource(source, stdin, f)
		if err != nil {
			return nil, err
		}
		// A header jupytext refuses is comments to python3: said, not refused.
		warning, whole, err := percent.CheckRun(src)
		if err != nil {
			return nil, fmt.Errorf("%s is %w", sourceName(source), err)
		}
		if warning != "" {
			fmt.Fprintf(stderr, "evalhost run: warning: %s %s\n", sourceName(source), warning)
		}
		opt := percent.Options{Language: f.lang, Magics: f.magics, Whole: whole}
		if f.params != nil {
			// papermill's parameters cell may be one that does not run
			opt.KeepTagged = []string{params.ParametersTag, params.InjectedTag}
		}
		cells = append(cells, percent.SplitScript(src, opt)...)
	case f.module != "":
		// One Python cell whatever --language says: python3 -m's module.
		cells = append(cells, percent.Cell{Cell: sessions.Cell{Language: sessions.LangPython, Module: f.module}})
	case len(cells) == 0:
		return nil, errors.New("nothing to run: give a FILE, - for stdin, -c CODE or -m MODULE")
	}
	if f.params != nil {
		if source != "" && !slices.ContainsFunc(cells, func(c percent.Cell) bool {
			return slices.Contains(c.Tags, params.ParametersTag) || slices.Contains(c.Tags, params.InjectedTag)
		}) {
			// As nb run and papermill say it: the script's own assignments,
			// after the first cell, then win over the parameters.
			fmt.Fprintf(stderr, "evalhost run: note: no cell of %s is tagged parameters; the parameters go into a new first cell\n", sourceName(source))
		}
		cells = params.InjectCells(cells, f.params)
		cells = slices.DeleteFunc(cells, func(c percent.Cell) bool { return c.NoRun })
	}
	out := make([]sessions.Cell, len(cells))
	for i, c := range cells {
		out[i] = c.Cell
		if c.Line > 0 && f.file != "" {
			// FILE's own cells, stdin's too (not -c's or the parameters'):
			// tracebacks and warnings name FILE:LINE, as python3 FILE's,
			// and stdin's "<stdin>", line N, as python3 -'s, whose source
			// linecache cannot read back, so no line of it is shown.
			out[i].File, out[i].Line = f.file, c.Line
		}
		out[i].Timeout = time.Duration(f.timeout) * time.Second
		if f.timeout == 0 {
			out[i].Timeout = sessions.NoTimeout
		}
	}
	return out, nil
}

// readSource reads FILE (stdin for "-"); a Python one is decoded as
// the interpreter that runs it decodes a source file (its coding
// declaration: pysource), a shell one's bytes are kept.
func readSource(name string, stdin io.Reader, f runFlags) (string, error) {
	if strings.HasSuffix(name, ".ipynb") {
		return "", fmt.Errorf("%s is a notebook: run it with \"evalhost nb run %s\"", name, name)
	}
	b, err := readBounded(name, stdin, maxScriptBytes)
	if err != nil {
		return "", err // it names the file and the cause
	}
	src := string(b)
	if f.lang == sessions.LangPython {
		shown := pysource.Name{Given: name, Abs: f.file}
		if name == "-" {
			shown.Given = "<stdin>"
		}
		if src, err = pysource.Decode(b, shown, f.sourcePython); err != nil {
			return "", err
		}
	}
	return normalizeSource(src), nil
}

// sourcePython is the interpreter the run's cells would start, as the
// registry resolves it, for pysource to read a source only it can read
// (another encoding, a refusal worded as its version words it).
func (f runFlags) sourcePython() (string, error) {
	home, err := config.Home()
	if err != nil {
		return "", err
	}
	dir, err := runDir(f.cwd)
	if err != nil {
		return "", err
	}
	py, err := sessions.ResolveInterpreter(f.python, dir, home, os.Getenv, 0)
	return py.Path, err
}

// normalizeSource reads a script as Python reads a source file: a UTF-8 byte
// order mark at the start is dropped and CRLF line ends become LF, so a
// file saved on Windows runs the same in sh cells (where a "\r" would end up
// in every command's last argument) as in Python ones.
func normalizeSource(src string) string {
	src = strings.TrimPrefix(src, "\uFEFF")
	return strings.ReplaceAll(src, "\r\n", "\n")
}

func runCells(cells []sessions.Cell, f runFlags, tools map[string]string, stdout, stderr io.Writer, logger *slog.Logger) int {
	home, err := config.Home()
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitUsage
	}
	starters, err := config.Starters(home, f.choice())
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitUsage
	}
	store, err := config.ArtifactStore(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		return exitUsage
	}
	// A closed output (`| head -1`) must stop the run, not kill evalhost with
	// SIGPIPE before it has ended the cell's processes: with SIGPIPE
	// notified, writes to a closed stdout or stderr fail with EPIPE, and the
	// outputs below cancel the run on it. Deferred first, so it stays until
	// the registry is closed.
	defer catchSIGPIPE()()
	reg, closeTools := newRunRegistry(f, tools, home, starters, store)
	defer closeTools()
	defer func() {
		reg.Close()
		timeline.Mark("closed") // the interpreters have exited
	}()

	// What a python3 process would be sent goes to the script's interpreter;
	// Ctrl-C waits for the cell to stop, as python3 would, unless --grace
	// bounds it, and reaches the script's children only where it can be the
	// terminal's (interruptAlone).
	ctx, interrupted := interruptible(reg.Kill, interruptOpts{
		forward: func(sig syscall.Signal) bool { return reg.Signal(f.session, sig) },
		quitTo:  quitForwarder(reg, f.session),
		jobs: &jobControl{
			suspend:    func() bool { return reg.Suspend(f.session) },
			resume:     func() bool { return reg.Resume(f.session) },
			ttySuspend: f.ttyRelay.suspend,
			ttyResume:  f.ttyRelay.resume,
		},
		wait:  !f.graceSet,
		echo:  f.ttyRelay.echo,
		alone: interruptAlone,
	})
	ownStderr := stderr // stoppedByOutput's, past the guard
	stdout = guardedWriter{stdout, interrupted, 0}
	stderr = guardedWriter{stderr, interrupted, 1}
	out, streams, flush := runRenderer(f, stdout, stderr, interrupted)
	defer flush()
	// Per-call: the interpreters end with the request, so each one's last
	// cell is sent with the exit request right behind it and the runner
	// leaves as soon as that cell ends.
	// Batch: a script's cell is not run twice, nor its later cells on a
	// fresh interpreter, after a death; python3 would have died too. A
	// cell's sys.exit() ends the run there, as in python3.
	req := sessions.Request{Session: f.session, Cwd: f.cwd, Cells: cells, KeepGoing: f.keepGoing, Mode: sessions.ModePerCall, Batch: true,
		IPython: f.ipython, Argv: f.argv, File: f.file, OnCellEnd: timedCellEnd(out.cellEnd), Streams: streams}
	res, err := reg.Eval(ctx, req, ipcTrace(logger, timedEmit(out.frame)))
	interrupts := interrupted.stop()
	if code, stopped := interrupted.stoppedByOutput(interrupts, ownStderr); stopped {
		return code
	}
	if err != nil {
		logger.Debug("run failed", "err", err)
		fmt.Fprintf(stderr, "evalhost run: %v\n", err)
		if errors.Is(err, sessions.ErrBadRequest) {
			return exitUsage // refused before any cell ran
		}
		return exitFailed
	}
	out.end(res)
	return runOutcome(res, interrupts, interrupted)
}

// newRunRegistry is a one-shot run's registry, with its tool bridge when
// there are tools; closeTools ends the bridge after the registry closed.
func newRunRegistry(f runFlags, tools map[string]string, home string, starters map[string]sessions.Starter, store *streamsink.Store) (reg *sessions.Registry, closeTools func()) {
	// No tools, no tool bridge: a server listening on loopback for calls
	// that can only fail costs every run its start and shutdown.
	envHook := func() (map[string]string, error) { return map[string]string{bridge.EnvNoTools: "1"}, nil }
	runHook := func(sessions.RunInfo, bool) {}
	closeTools = func() {}
	if len(tools) > 0 {
		toolServer := bridge.New(bridge.CommandTools(tools), bridge.Options{})
		closeTools = func() { toolServer.Close() }
		envHook = toolServer.Env
		runHook = func(run sessions.RunInfo, active bool) { toolServer.RunHook(run.Session, run.Run, active) }
	}
	return sessions.New(sessions.Config{
		Starters:      starters,
		Grace:         f.grace,
		EnvHook:       envHook,
		RunHook:       runHook,
		Home:          home,
		Python:        f.python,
		Stdin:         f.stdin,
		StdinTerminal: f.stdinTerminal,
		StdinWithheld: f.stdinWithheld,
		ExtraEnv:      extraEnv(f.terminal.env, f.env),
		Terminal:      f.terminal.fds,
		PythonArgs:    f.py.args(),
		// One destination: one pipe, so the cells' bytes keep their order.
		MergeStderr: f.merged,
		// Only a tail the human view cuts (--max-output) spills: live and
		// --json output is seen whole, and a copy on disk would cost most
		// of the run's time. Live output is the program's own bytes, as
		// python prints them, for the pipeline or file it goes to.
		Sink: streamsink.Options{MaxBytes: f.maxOutput, NoSpill: f.maxOutput == 0 || f.json,
			Passthrough: f.maxOutput == 0 && !f.json, Store: store},
	}), closeTools
}

// timedEmit marks the first output of a cell on the EVALHOST_DEBUG timeline.
func timedEmit(emit sessions.Emit) sessions.Emit {
	if !timeline.Enabled() {
		return emit
	}
	seen := -1
	return func(cell int, f frames.Frame) {
		if cell != seen && f.Type != frames.TypeReady {
			seen = cell
			timeline.Mark("first-frame", "cell", cell+1, "type", f.Type)
		}
		emit(cell, f)
	}
}

// timedCellEnd marks each cell's end on the EVALHOST_DEBUG timeline.
func timedCellEnd(end func(sessions.CellResult)) func(sessions.CellResult) {
	if !timeline.Enabled() {
		return end
	}
	return func(res sessions.CellResult) {
		timeline.Mark("cell-end", "cell", res.Index+1, "status", res.Status, "ms", res.DurationMs)
		end(res)
	}
}

// guardedWriter reports its first failed write: output that can no longer
// be shown ends the run. After it nothing more is written, on either
// stream: once the reader has left (EPIPE, as with | head), as a process
// killed by SIGPIPE prints nothing more; after another failure (a full
// disk), as python3 stops at the write that failed, where what follows it
// here (the interrupt that stops the script, its traceback, the cancelled
// cell's notices) would say the script was interrupted.
type guardedWriter struct {
	w    io.Writer
	in   *interrupts
	slot int // stdout's 0, stderr's 1 (interrupts.writing)
}

func (g guardedWriter) Write(p []byte) (int, error) {
	if g.in.outputGone() {
		return len(p), nil
	}
	g.in.writeStarted(g.slot)
	n, err := g.w.Write(p)
	g.in.writeEnded(g.slot)
	if err != nil {
		g.in.outputLost(g.slot, err)
	}
	return n, err
}

// runRenderer renders a run's frames and cell ends, its own or those the
// background process sends an attached run, as python3 would show them:
// --json's lines, or the human view, whose notices of an exit or a death
// the run dies of too are left out, as python3 says nothing then (in);
// flush shows every frame even without an end line. streams, when set,
// takes the cells' bytes as written: bulk output without a copy per chunk.
func runRenderer(f runFlags, stdout, stderr io.Writer, in *interrupts) (out renderer, streams func(int, frames.Type, []byte), flush func()) {
	if f.json {
		j := newJSONRenderer(stdout)
		return j, nil, j.flush
	}
	h := newHumanRenderer(stdout, stderr, f.imagesDir, f.maxOutput > 0)
	h.pythonExits = !f.ipython
	h.holdNotices = true
	h.diesOf, h.silenced = in.diesOf, in.silenced
	if !h.bounded {
		streams = h.stream
	}
	return h, streams, func() {}
}

// runExitCode is run's exit code: exitCode's, but for a script that ended
// itself by sys.exit(N), os._exit(N) or a C exit(N), which exits N, as
// python3 does (its low 8 bits, as the OS keeps them; 1 for a message).
func runExitCode(res sessions.Result, interrupted bool) int {
	if !interrupted && res.FailedCell >= 0 && res.FailedCell < len(res.Cells) {
		if c := res.Cells[res.FailedCell]; c.Index == res.FailedCell {
			if status, ok := c.ScriptExit(); ok {
				return status & 0xff
			}
		}
	}
	return exitCode(res, interrupted)
}

func exitCode(res sessions.Result, interrupted bool) int {
	switch {
	case interrupted:
		return exitInterrupted
	case res.Status == sessions.StatusOK:
		return exitOK
	case res.Status == sessions.StatusTimeout:
		return exitTimeout
	case res.Status == sessions.StatusCancelled:
		return exitInterrupted
	default:
		return exitFailed
	}
}
