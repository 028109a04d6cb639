package sessions

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// Languages a cell may be written in.
const (
	LangPython = "py"
	LangShell  = "sh"
)

// languages are the names a caller may give a cell's language, the
// language's own first: agents and people write "python" or "bash" as
// often as the short names.
var languages = []struct {
	lang  string
	names []string
}{
	{LangPython, []string{LangPython, "python", "python3", "ipython"}},
	{LangShell, []string{LangShell, "bash", "shell"}},
}

// ParseLanguage returns the language a name stands for (case-insensitive:
// py, python, python3, ipython; sh, bash, shell), and false for any other,
// the empty name included.
func ParseLanguage(name string) (string, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, l := range languages {
		if slices.Contains(l.names, name) {
			return l.lang, true
		}
	}
	return "", false
}

// LanguageChoices names the languages ParseLanguage takes, for an error
// message or a schema: `"py" (or python, python3, ipython) or "sh" (or
// bash, shell)`.
func LanguageChoices() string {
	var b strings.Builder
	for i, l := range languages {
		if i > 0 {
			b.WriteString(" or ")
		}
		fmt.Fprintf(&b, "%q (or %s)", l.names[0], strings.Join(l.names[1:], ", "))
	}
	return b.String()
}

// Modes of a request.
const (
	ModeSession = "session"  // reuse the session's interpreters
	ModePerCall = "per-call" // fresh interpreters, always shut down afterwards
)

// Timeout bounds, in seconds, as the reference clamps them.
const (
	DefaultTimeout = 30 * time.Second
	MinTimeout     = 1 * time.Second
	MaxTimeout     = 600 * time.Second
	// NoTimeout as a cell's Timeout lets it run until it ends or is
	// cancelled (a batch run's choice, as nbclient's default is); it is
	// not clamped.
	NoTimeout = time.Duration(math.MaxInt64)
)

// Cell is one unit of code.
type Cell struct {
	Language string        `json:"language"`
	Code     string        `json:"code"`
	Title    string        `json:"title,omitempty"`
	Tags     []string      `json:"tags,omitempty"` // as a notebook cell's metadata.tags; reported in its result
	Reset    bool          `json:"reset,omitempty"`
	Timeout  time.Duration `json:"-"` // 0 means the registry's default; clamped to 1..600 s unless NoTimeout
	// RaisesOK: an exception the cell raises (StatusError, nothing
	// else) is expected, as nbclient takes a cell tagged raises-exception:
	// its result says error, but the later cells run and the request's
	// FailedCell and Status do not name it.
	RaisesOK bool `json:"-"`
	// OnTimeout is what the cell's timeout does: OnTimeoutInterrupt ("" too)
	// stops the cell; OnTimeoutDetach ends the cell's result as
	// StatusDetached and keeps it running as a job (see Registry.Job).
	OnTimeout string `json:"onTimeout,omitempty"`
	// MaxRuntime bounds a detached cell, counted like Timeout from when it
	// is first sent; past it the job is stopped as a timeout stops a cell.
	// 0 means DefaultMaxRuntime; it must lie within Timeout..MaxMaxRuntime.
	MaxRuntime time.Duration `json:"-"`
	// File, when set, is the file a Python cell's code comes from and Line
	// the 1-based line of its first line there (0 counts as 1): the runner
	// compiles it under that name with the file's line numbers, so
	// tracebacks, warnings and inspect name FILE:LINE, as python3 FILE
	// (frames.Request's Filename and FirstLine). Other backends ignore it.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Module, when set, makes a Python cell run that module as python3 -m
	// MODULE does (frames.Request's Module): in __main__'s namespace, its
	// file as sys.argv[0], a package's __main__. Code must then be "": a
	// backend without modules (the gateway) runs ModuleCode in its place. With Request.Argv ["-m", ARG...] the
	// cwd's full path is first on sys.path, as python3 -m puts it.
	Module string `json:"module,omitempty"`
	// Script, in a Python cell, runs it as python3 runs a script file: the
	// whole code is compiled as one module ("exec"), so the value of an
	// expression statement is never shown, the last one's included (no
	// result frame, no Out/_ history, sys.displayhook not called), a
	// docstring first is __doc__, and matplotlib figures the code leaves open
	// are not shown at its end (plt.show() still shows them, as a file an
	// agent can look at, and display() shows what it is given). Without it a
	// cell is a notebook's, which shows its last expression's value. The
	// runner's magics and !cmd lines still run (python3 would refuse them).
	// frames.Request's Script; a shell cell ignores it (a shell shows no
	// values); the gateway backend's kernel shows no last value either, but
	// figures as its inline backend does.
	Script bool `json:"script,omitempty"`
}

// ModuleCode is the Python code that runs module name as python3 -m
// does, for a backend that takes code alone: the name as a JSON string
// (a valid Python literal). runpy's SystemExit for a module not found
// comes while it handles its own _Error, which IPython (8.x) fails to
// show chained (AttributeError: 'tuple' object has no attribute
// 'tb_frame'); python3 shows the message alone, so the chain is cut.
func ModuleCode(name string) string {
	b, _ := json.Marshal(name)
	return "try:\n    __import__(\"runpy\")._run_module_as_main(" + string(b) + ")\n" +
		"except SystemExit as e:\n    e.__context__ = None\n    raise\n"
}

// What a cell's timeout does (Cell.OnTimeout).
const (
	OnTimeoutInterrupt = "interrupt"
	OnTimeoutDetach    = "detach"
)

// Bounds of a detached cell's run (Cell.MaxRuntime).
const (
	DefaultMaxRuntime = time.Hour
	MaxMaxRuntime     = 24 * time.Hour
)

// Request is an ordered list of cells for one session.
type Request struct {
	ID        string            // for run ids and messages; generated when empty
	Session   string            // session id; "" means "default"
	Cwd       string            // working directory; "" means the host's
	Python    string            // explicit interpreter for this request; "" means Config.Python, else resolved per cwd
	Mode      string            // ModeSession (default) or ModePerCall
	Env       map[string]string // set in the interpreter before the first cell of each language (and again in one that replaced it), as a command's env X=1 is; a name CheckEnvName refuses refuses the request
	Cells     []Cell
	KeepGoing bool // run the remaining cells after a failed one
	// EnterCwd sends the session's cwd with the request's first cell of
	// each language, as a command run there starts there (run --session):
	// a cell's own chdir or cd lasts to the request's end, not into the
	// next request. Without it the cwd goes only to a fresh interpreter.
	EnterCwd bool
	// Environ, when not nil, is the environment (KEY=VALUE) of the command
	// the request comes from: the interpreters it starts take it in
	// Config.Environ's place, and running ones its PATH and VIRTUAL_ENV
	// (a shell's PYTHONPATH too) when they differ from what they last got
	// (cmdenv.go).
	Environ []string
	// Batch runs the cells as a script or a notebook runs, whose cells
	// build on each other's state and may have side effects:
	//   - an interpreter that dies during a cell fails that cell
	//     (StatusKilled) instead of being replaced for one retry, which would
	//     repeat its side effects on a fresh, empty interpreter (as papermill's
	//     DeadKernelError and python3's own death never do), and the later
	//     cells are skipped, KeepGoing or not;
	//   - a cell that ends by sys.exit() or exit() (SystemExit with status
	//     0, the done frame's Exit) is ok and the later cells are skipped,
	//     as python3 stops there;
	//   - so are they, KeepGoing or not, after a script's (Argv) Python
	//     cell's uncaught KeyboardInterrupt that no interrupt caused (the
	//     builtin, raised: ExitStatus 130), which python3 dies of: the
	//     script said stop, as Ctrl-C does, not failed. A notebook's (no
	//     Argv) is an error as any other, as in Jupyter.
	Batch bool
	// IPython runs the session's Python cells through IPython's own
	// InteractiveShell (full magics); it is part of the session's key.
	IPython bool
	// Argv, when non-nil, is what a script's cells see as their command
	// line: Python's sys.argv and a shell cell's $1... from its second
	// element, as python3 FILE ARGS, -c or - give them. File is then
	// Python's __file__, its directory first on sys.path ("" for none: one
	// an earlier request set goes, and its directory); sys.path is then
	// python3's for the command line, without the session's cwd entry and
	// the empty string a session without Argv imports from
	// (runner.ArgvSource).
	// They are set before the request's first cell of each language, and
	// again in an interpreter that replaced one (a reset, a retry); the
	// cells are one script, whose changes to them last into the next cell.
	// Nil leaves both as the session has them. A Python cell's uncaught
	// error is reported as python3 reports one that ends a script when its
	// request has Argv (frames.Request.InScript), as a notebook's otherwise,
	// whatever an earlier request to the session gave.
	Argv []string
	File string
	// OnCellEnd, when set, receives each cell's result as soon as it is known.
	OnCellEnd func(CellResult)
	// Streams, when set, takes the stdout and stderr text of cells whose
	// interpreter can lend it (Python in evalhost's runner) in place of
	// stdout and stderr frames: as bytes, after the sink, in order with the
	// frames emit gets and from the same goroutine. p is valid only during
	// the call, as an io.Writer's is: bulk output then moves without a copy
	// or an allocation per chunk. Other interpreters' text, a detachable
	// cell's and the sink's held-back bytes still come as frames.
	Streams func(cell int, t frames.Type, p []byte)
	// Terminal, when set, is the terminal the caller shows this request's
	// output on (run --session at one), for its Python cells in
	// evalhost's runner and for them alone, each taking it back as it
	// ends (frames.Terminal): Fds (1, 2) are the streams shown there
	// (isatty() true, stdout line-buffered, 3.13+'s error reports
	// coloured), Env what TerminalEnv names, set while each cell runs (a
	// nil value unsets), but for a name Env sets or an earlier cell of
	// the request changed (its cells are one script). Config.Terminal is the
	// whole registry's; a session's interpreter serves many requests.
	Terminal *frames.Terminal
	// Sink, when set, replaces Config.Sink for this request's cells: a
	// caller that shows output its own way (the background process's
	// client, bounded or passed through) picks the bounds it shows.
	Sink *streamsink.Options
}

// Status of a cell or a whole request.
type Status string

// Cell statuses. A request's status is that of its first cell that was not ok.
const (
	StatusOK        Status = "ok"
	StatusError     Status = "error"
	StatusCancelled Status = "cancelled"
	StatusTimeout   Status = "timeout"
	StatusKilled    Status = "killed"  // the interpreter died, or was killed to stop the cell
	StatusSkipped   Status = "skipped" // not run because an earlier cell failed
	// StatusDetached: the cell outlived its timeout with OnTimeoutDetach and
	// runs on as the job CellResult.Job names; its session is busy until
	// the job ends. A job's final status is one of the others.
	StatusDetached Status = "detached"
)

// CellResult is the truthful summary of one cell.
type CellResult struct {
	Index          int      `json:"cell"`
	Language       string   `json:"language"`
	Title          string   `json:"title,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	Status         Status   `json:"status"`
	ExecutionCount int      `json:"executionCount"`
	DurationMs     float64  `json:"durationMs"`
	// StoppedMs is how much of DurationMs a Python cell's interpreter was
	// stopped by job control (Registry.Suspend until Resume: a Ctrl-Z
	// until fg), time the cell could not run and its timeout did not
	// count; DurationMs less it is the cell's run time.
	StoppedMs float64 `json:"stoppedMs,omitempty"`
	StateLost bool    `json:"stateLost"` // a kill, death, retry or reset lost interpreter state
	Retried   bool    `json:"retried"`   // the interpreter died and the cell ran again
	// Exited: it ended by sys.exit() or exit() (frames.Frame.Exit; also a
	// last cell whose interpreter then exited non-zero, status error), or,
	// in a batch (Request.Batch), its Python interpreter exited during it,
	// or between the cell before and it (os._exit(N), a C exit(N); a
	// thread's): status killed, ExitStatus N.
	Exited   bool   `json:"exited,omitempty"`
	Recycled bool   `json:"recycled,omitempty"`
	Message  string `json:"message,omitempty"` // why it failed, when the frames don't say
	// ExitStatus is python3's status for the SystemExit the cell raised,
	// when not 0 and the cell's Status is error (not after an interrupt,
	// a timeout's or a client's, whose status it keeps); ExitMessage what
	// python3 would print for it on stderr, when anything
	// (frames.Frame.ExitStatus). A program that runs a script as python3
	// would exits with ExitStatus&0xff and prints ExitMessage instead of
	// the error's traceback, unless the SystemExit's error frame was
	// Reported (a script's last cell: the runner wrote it before the
	// exit's output, as python3 does). In a batch it is also the status of an
	// interpreter that exited during the cell (Exited, status killed). A
	// Python cell's uncaught KeyboardInterrupt that no interrupt of the
	// registry's caused (raised, or from a SIGINT the cell sent itself or
	// another process sent) is 130: python3 then shows the traceback and
	// dies of SIGINT, which a shell reports as 130. Only the builtin's, and
	// on 3.14+ a subclass's (frames.Frame.KeyboardInterrupt): python3 ends
	// with 1 by a class of that name, and before 3.14 by a subclass, as by
	// any other error. Through the
	// gateway, whose kernel names the type alone, a class named
	// KeyboardInterrupt is taken for the builtin.
	ExitStatus  int     `json:"exitStatus,omitempty"`
	ExitMessage *string `json:"exitMessage,omitempty"`
	// Signal is, in a batch, the number of the signal that killed the
	// cell's Python interpreter while the cell ran (status killed), between
	// the cell before and this one (status killed: a signal passed on that
	// landed as the cell before ended), or as it exited after its last
	// cell (status error, InterpreterExit): not one
	// the registry sent to stop it (a timeout's, a cancel's, Kill), but
	// the script's own (os.kill(os.getpid(), ...), a crash), an outside
	// one, or one sent through Registry.Signal. A program that runs a
	// script as python3 would dies of it too. 0 otherwise.
	Signal int             `json:"signal,omitempty"`
	Output streamsink.Dump `json:"output"`
	// Job names the job a detached cell runs on as; JobOffset is the size of
	// the job's output so far, where Registry.Job reads only what is new.
	Job       string `json:"job,omitempty"`
	JobOffset int64  `json:"jobOffset,omitempty"`
	// CancelledBeforeStart: the request's cancellation (a Ctrl-C, a
	// timeout's or the caller's cancel, its session's close) came before
	// the cell started, while the request waited its turn, while the
	// cell's interpreter started, or before the cell's turn among the
	// request's cells: nothing of it ran (status cancelled). Set by
	// markNotStarted alone; read through NotStarted.
	CancelledBeforeStart bool `json:"notStarted,omitempty"`
}

// notStarted is the Message of a cell the request's cancellation came
// before (NotStarted).
const notStarted = "request cancelled before the cell started"

// markNotStarted makes c the result of a cell the request's cancellation
// came before, on every path that finds it so.
func (c *CellResult) markNotStarted() {
	c.Status, c.Message, c.CancelledBeforeStart = StatusCancelled, notStarted, true
}

// NotStarted says whether the cell never started because the request was
// cancelled before its turn (CancelledBeforeStart): status cancelled,
// nothing run, no output. A request's cells after its cancellation are all
// so, to its end, unless skipped.
func (c CellResult) NotStarted() bool {
	return c.Status == StatusCancelled && c.CancelledBeforeStart
}

// sigintStatus is a shell's status for a process SIGINT killed.
const sigintStatus = 130

// RaisedKeyboardInterrupt says whether the cell ended by a KeyboardInterrupt
// it raised, not an interrupt of the caller's (python3 dies of SIGINT
// there): the one error whose status is 130 without an exit.
func (c *CellResult) RaisedKeyboardInterrupt() bool {
	return c.Status == StatusError && !c.Exited && c.ExitStatus == sigintStatus
}

// ScriptExit says whether the cell ended the script as python3's process
// would have ended there, and with what status (before the OS keeps its
// low 8 bits): by sys.exit(N) other than 0 (status error, ExitStatus and
// ExitMessage), or, in a batch, by its interpreter's own exit (os._exit(N),
// a C exit(N): status killed, Exited), 0 included, or by an uncaught
// KeyboardInterrupt (130, status error; its traceback is python3's too). A
// sys.exit(0) is not one: its cell is ok, as any other that ends the
// script without failing.
func (c CellResult) ScriptExit() (status int, ok bool) {
	switch {
	case c.Status == StatusError && (c.ExitStatus != 0 || c.ExitMessage != nil):
	case c.Status == StatusKilled && c.Exited:
	default:
		return 0, false
	}
	return c.ExitStatus, true
}

// Result is the summary of a request.
type Result struct {
	Status     Status       `json:"status"`
	FailedCell int          `json:"failedCell"` // -1 when every cell is ok
	Cells      []CellResult `json:"cells"`
}

func (r *Request) validate(defTimeout time.Duration) error {
	switch r.Mode {
	case "":
		r.Mode = ModeSession
	case ModeSession, ModePerCall:
	default:
		return fmt.Errorf("%w: mode %q is not %q or %q", ErrBadRequest, r.Mode, ModeSession, ModePerCall)
	}
	if len(r.Cells) == 0 {
		return fmt.Errorf("%w: a request needs at least one cell", ErrBadRequest)
	}
	if err := checkEnvNames(r.Env); err != nil {
		return fmt.Errorf("%w: env: %w", ErrBadRequest, err)
	}
	if err := r.checkTerminal(); err != nil {
		return err
	}
	for i, c := range r.Cells {
		if c.Language != LangPython && c.Language != LangShell {
			return fmt.Errorf("%w: cell %d: language %q is not %q or %q", ErrBadRequest, i, c.Language, LangPython, LangShell)
		}
		if c.Timeout < 0 {
			return fmt.Errorf("%w: cell %d: timeout must be positive", ErrBadRequest, i)
		}
		if c.Module != "" && c.Language != LangPython {
			return fmt.Errorf("%w: cell %d: a module runs in a Python cell, not %q", ErrBadRequest, i, c.Language)
		}
		if c.Module != "" && c.Code != "" {
			// The runner would run the module, a gateway kernel the code.
			return fmt.Errorf("%w: cell %d: give code or a module, not both", ErrBadRequest, i)
		}
		if err := r.validateDetach(i, defTimeout); err != nil {
			return err
		}
	}
	if len(r.Session) > MaxSessionIDBytes {
		return fmt.Errorf("%w: the session id is %d bytes, more than the %d a session id may have; use a short name",
			ErrBadRequest, len(r.Session), MaxSessionIDBytes)
	}
	if r.Session == "" {
		r.Session = "default"
	}
	return nil
}

// MaxSessionIDBytes bounds a session id: it goes into the interpreters'
// environment (PI_TOOL_BRIDGE_SESSION), where Linux takes at most 128 KiB
// a variable, and past that the interpreter could not start.
const MaxSessionIDBytes = 4096

// ClampTimeout applies the default and the 1..600 s bounds; NoTimeout
// stays.
func ClampTimeout(d, def time.Duration) time.Duration {
	if d == NoTimeout {
		return d
	}
	if d == 0 {
		d = def
	}
	return min(max(d, MinTimeout), MaxTimeout)
}

// validateDetach checks cell i's OnTimeout and MaxRuntime. MaxRuntime is
// refused, not clamped, out of range: unlike a timeout, it has no
// reference behaviour to follow, and a job silently cut to 24 h (or run
// longer than asked) would surprise its caller.
func (r *Request) validateDetach(i int, defTimeout time.Duration) error {
	c := &r.Cells[i]
	switch c.OnTimeout {
	case "", OnTimeoutInterrupt, OnTimeoutDetach:
	default:
		return fmt.Errorf("%w: cell %d: onTimeout %q is not %q or %q", ErrBadRequest, i, c.OnTimeout, OnTimeoutInterrupt, OnTimeoutDetach)
	}
	if c.OnTimeout == OnTimeoutDetach && c.Timeout == NoTimeout {
		return fmt.Errorf("%w: cell %d: onTimeout %q needs a timeout to detach at, and this cell has none", ErrBadRequest, i, OnTimeoutDetach)
	}
	if c.MaxRuntime == 0 {
		return nil
	}
	if c.OnTimeout != OnTimeoutDetach {
		return fmt.Errorf("%w: cell %d: maxRuntime applies only to a cell with onTimeout %q", ErrBadRequest, i, OnTimeoutDetach)
	}
	if timeout := ClampTimeout(c.Timeout, defTimeout); c.MaxRuntime < timeout || c.MaxRuntime > MaxMaxRuntime {
		return fmt.Errorf("%w: cell %d: maxRuntime %s is out of range; use %s (the cell's timeout) to %s, or 0 for %s",
			ErrBadRequest, i, c.MaxRuntime, timeout, MaxMaxRuntime, DefaultMaxRuntime)
	}
	return nil
}

// maxRuntime is a detached cell's bound, defaulted.
func (c *Cell) maxRuntime() time.Duration {
	if c.MaxRuntime == 0 {
		return DefaultMaxRuntime
	}
	return c.MaxRuntime
}
