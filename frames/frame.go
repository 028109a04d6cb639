package frames

import (
	"encoding/json"
	"unicode/utf8"
)

// Version is the protocol version the runner reports in its ready frame.
const Version = "1.1"

// DefaultMaxLine bounds one NDJSON line on fd 0 and fd 3.
const DefaultMaxLine = 32 << 20

// Type names a frame kind.
type Type uint8

// Frame types, in the order the package doc lists them.
const (
	TypeUnknown Type = iota
	TypeReady
	TypeStarted
	TypeStdout
	TypeStderr
	TypeDisplay
	TypeUpdateDisplay
	TypeClearOutput
	TypeResult
	TypeError
	TypeInput
	TypeWarning
	TypeDone
	TypeSync
	TypeInterrupted
	typeCount
)

var typeNames = [typeCount]string{
	TypeUnknown:       "",
	TypeReady:         "ready",
	TypeStarted:       "started",
	TypeStdout:        "stdout",
	TypeStderr:        "stderr",
	TypeDisplay:       "display",
	TypeUpdateDisplay: "update_display",
	TypeClearOutput:   "clear_output",
	TypeResult:        "result",
	TypeError:         "error",
	TypeInput:         "input",
	TypeWarning:       "warning",
	TypeDone:          "done",
	TypeSync:          "sync",
	TypeInterrupted:   "interrupted",
}

// String returns the wire name of t.
func (t Type) String() string {
	if t < typeCount {
		return typeNames[t]
	}
	return ""
}

// ParseType maps a wire name to its Type; unknown names give TypeUnknown.
func ParseType(s string) Type {
	for i, n := range typeNames {
		if i != 0 && n == s {
			return Type(i)
		}
	}
	return TypeUnknown
}

// Status values of a done frame.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Bundle maps a MIME type to its value as raw JSON: a JSON string for text
// and base64 images, any JSON value for JSON MIME types. Keeping it raw lets
// notebooks store application/json exactly as the kernel sent it. The
// values are read-only: [Decode]'s share one copy of the line.
type Bundle map[string]json.RawMessage

// Text returns the string value of mime, and whether it was a JSON string.
func (b Bundle) Text(mime string) (string, bool) {
	raw, ok := b[mime]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// plainString decodes a JSON string without escapes, as json.Unmarshal
// would (a result's "2", most text): every byte stands for itself. Anything
// else (an escape, a control byte, invalid UTF-8, which Unmarshal replaces)
// is left to Unmarshal.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}

// SetText stores a string value for mime, encoded as json.Marshal encodes
// it (without its buffers, which cost a large value twice its size).
func (b Bundle) SetText(mime, value string) {
	raw := append(make([]byte, 0, len(value)+2), '"')
	b[mime] = append(appendEscaped(raw, value), '"')
}

// Frame is one protocol message. Which fields are meaningful depends on Type,
// as the package doc lists; the zero value of a field means absent.
type Frame struct {
	Type Type
	ID   string // cell (request) id; empty for ready and some warnings

	Data string // stdout, stderr

	Bundle    Bundle          // display, update_display, result
	Metadata  json.RawMessage // display, update_display, result; may be nil
	DisplayID string          // display (optional), update_display

	Wait bool // clear_output

	Ename     string   // error
	Evalue    string   // error
	Traceback []string // error

	Prompt  string // input
	Message string // warning

	Status         string // done: StatusOK or StatusError
	ExecutionCount int    // done, result
	Cancelled      bool   // done
	// Interrupted, on done, says the host's interrupt landed in the cell
	// (the runner's "interrupted" frame for it: its KeyboardInterrupt was
	// raised there), so a cell that still ended ok took it. Host → caller
	// only; encoders leave it out.
	Interrupted bool
	Exit        bool // done: the cell raised SystemExit (sys.exit(), exit()), status ok for 0 or None, or its interpreter exited non-zero as it ended (host's InterpreterExit); error: that SystemExit's, or InterpreterExit's

	// ExitStatus is python3's exit status for that SystemExit when not 0
	// (sys.exit(3): 3; a code that is not an int: 1; an int past a C int:
	// -1), before the OS keeps its low 8 bits. When ExitPrints, python3
	// would print ExitMessage, str(code), on stderr (sys.exit("bad input")).
	ExitStatus  int
	ExitMessage string
	ExitPrints  bool

	// Signal, on done and the host's InterpreterExit error, is the signal
	// that killed a last cell's interpreter as it ended (python3 would have
	// died of it then). Host → caller only; encoders leave it out.
	Signal int

	// Reported marks an error the cell's output already reports as
	// python3's script would (the runner's own mode, a script's cell: the
	// user's sys.excepthook ran, or the traceback went to a replaced
	// sys.stderr; a script's last cell's sys.exit(text), whose message
	// the runner wrote before the exit): a renderer that shows output as
	// python3 does shows no traceback (nor exit message) of its own for it.
	Reported bool

	// KeyboardInterrupt marks an error that is the builtin
	// KeyboardInterrupt itself (on 3.14+ a subclass too), not a class of
	// that name (nor a subclass before 3.14): python3 dies of it by SIGINT
	// (status 130) when it ends a script, of those with status 1. Backend
	// → registry only: sessions reads it, encoders leave it out (a client
	// has the ename). The gateway, whose
	// kernel's error message names the type alone, sets it by that name.
	KeyboardInterrupt bool

	Runner     string // ready
	Python     string // ready
	PID        int    // ready
	Executable string // ready
	Marks      bool   // ready: the runner writes position marks (see Order)
	Wake       int    // ready: the signal the runner's main thread takes as a wake-up (see interrupted)

	// Runner → host only (see Order); the host consumes them, and encoders
	// leave them out.
	Pos      int   // a positioned frame's place among the cell's positioned frames, from 1
	Unmarked uint8 // positioned frames and done: the fds (bit 1: fd 1, bit 2: fd 2) that got no mark
}

// Request is a host → runner message.
type Request struct {
	Exit bool // {"type":"exit"}; the other fields are ignored

	ID   string
	Code string
	Cwd  string
	Env  map[string]*string // a nil value unsets the variable
	// Argv, when non-nil, is sys.argv for the cell and File its __file__
	// ("" for none), as python3 sets them for a script, -c or stdin.
	Argv []string
	File string
	Run  string
	// Filename, when set, is the file Code comes from and FirstLine the
	// 1-based line of Code's first line there (0 counts as 1): Python
	// compiles the cell under that name with its lines numbered as in the
	// file, so tracebacks, warnings and inspect name the file, as python3 FILE.
	Filename  string
	FirstLine int
	// Module, when set, runs the module of that name as python3 -m does
	// (runpy._run_module_as_main, in __main__'s namespace) instead of Code,
	// which a backend that lacks it (the gateway) runs instead.
	Module string
	// Script runs Code as python3 runs a script file: compiled whole as a
	// module, no expression statement's value shown (no result frame,
	// sys.displayhook not called), figures left open not shown at the end;
	// without it Code is a notebook cell, whose last expression is shown.
	Script bool
	// InScript says the cell is one of a script's cells: its request gave
	// argv (sessions.Request.Argv, which only the first cell of each
	// interpreter carries), so its uncaught error is reported as python3
	// reports one that ends a script. Without it (and without Argv) the
	// cell is a notebook's, whatever an earlier request was.
	InScript bool
	// Last says the exit request follows this cell at once
	// (host.Process.ExitAfterNextCell): it is the interpreter's last, and
	// a script's (InScript) leaves text its stdout or stderr could not
	// write to the exit, which reports it as python3's does.
	Last bool
	// ExitReports says the interpreter exits once the request's cells end
	// and its caller shows their output as python3 would (a batch run per
	// call: evalhost run): a script's cell (InScript or Argv) that is not
	// Last gives no warning of text its stdout or stderr could not write
	// either, since the exit reports it as python3's does, once.
	ExitReports bool
	// Terminal, when set, is the terminal the caller shows this cell's
	// output on (a request's, not the interpreter's: run --session at one),
	// for this cell alone: the runner takes it back as the cell ends.
	Terminal *Terminal
}

// Terminal is what a Python cell is told of the terminal its caller shows
// its output on (execute's "terminal"), as EVALHOST_TTY tells a whole
// interpreter: Fds (1, 2) are the streams shown there, whose isatty() is
// then true (stdout line-buffered), and Env the variables set (a nil
// value unsets) while the cell runs and put back after: COLUMNS, LINES
// and what decides colours (TERM, NO_COLOR, FORCE_COLOR, PYTHON_COLORS).
// Request, when set, names the caller's request the cell is one of: its
// cells are one script, so a variable an earlier one changed is not set
// again for the later ones.
type Terminal struct {
	Fds     []int
	Env     map[string]*string
	Request string
}
