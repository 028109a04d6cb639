package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/runner"
)

// Defaults for zero Options fields.
const (
	DefaultStartTimeout = 10 * time.Second
	DefaultGrace        = 2 * time.Second
)

// Options describe how to start one runner process.
type Options struct {
	Python string   // interpreter: a path, or a name looked up on PATH
	Args   []string // interpreter arguments before the runner path, e.g. -X utf8
	Runner string   // path of runner.py
	// Env is the complete child environment, already filtered; nil means
	// this process's environment. EVALHOST_SYNC_NONCE is always replaced.
	Env          []string
	Dir          string        // working directory; empty means this process's
	StartTimeout time.Duration // until ready; default DefaultStartTimeout
	Grace        time.Duration // interrupt → kill, exit → kill; default DefaultGrace
	MaxLine      int           // frame line bound on fd 3; default frames.DefaultMaxLine
	// Stdin, when set, is what the cells read as their standard input
	// (input(), sys.stdin, a subprocess's fd 0), as python3 FILE reads what
	// is piped into it; nil gives them none: input() fails at once and
	// sys.stdin reads empty, as a Jupyter kernel's. Start does not close it. A terminal here would make input()
	// wait for a person, which a cell must not (DESIGN: stdin is not
	// interactive): pass one only when that is what the caller wants.
	Stdin *os.File
	// StdinTerminal makes Stdin, a terminal (a pseudo-terminal the caller
	// feeds: package termrelay), the interpreter's controlling terminal, as
	// a shell gives python3 its own: /dev/tty, getpass, termios and a
	// child's password prompt (ssh, sudo) work on it. Without it the
	// interpreter has no controlling terminal at all. Start refuses it
	// without Stdin. The terminal's own signals (a typed ^C) go to the
	// interpreter's process group: a caller relaying keystrokes keeps them
	// for itself (the terminal it reads from in ISIG mode).
	StdinTerminal bool
	// StdinWithheld, without Stdin, says why the caller does not give
	// the cells a stdin it has (evalhost run typed at a shell: its
	// terminal; run --session: what is piped into the command cannot reach
	// the background process's interpreter): reading sys.stdin then fails
	// at once, as input() does, and both say "... is not given to the
	// script: " and this text, which should say what to do instead; not
	// empty, which a script would take for input that had none. Empty: the
	// cells have no stdin, and sys.stdin reads empty, as a Jupyter
	// kernel's.
	StdinWithheld string
	// Terminal lists the fds (1, 2) whose bytes the caller shows on a
	// terminal: the cells' sys.stdout/sys.stderr then say isatty() (their
	// fds stay pipes), and stdout is line-buffered, as python3's on one.
	Terminal []int
	// MergeStderr gives the runner one pipe for its fd 1 and fd 2, as a
	// shell's 2>&1 does: what the cells, their children and C code write to
	// either arrives in the kernel's order, which two pipes cannot keep. All
	// of the runner's text then arrives as stdout (frames, or
	// ExecuteStreams' bytes) and none as stderr; what it writes outside
	// cells feeds the stderr tail of start and death errors. Its
	// sys.stdout and sys.stderr flush as they do apart (runner/stdio.py),
	// so their text keeps the program's order, as python3 -u writes it,
	// and a death keeps what they flushed. For a
	// caller whose stdout and stderr are one destination (evalhost run
	// 2>&1, a terminal); one that shows, counts or keeps stderr apart
	// must not set it.
	MergeStderr bool

	// markWait, posWait and termGrace, when set, replace the package's
	// bounds of those names: a test's shorter (or longer) ones.
	markWait, posWait, termGrace time.Duration
}

// ErrNoInterpreter: Options.Python does not name a runnable file.
var ErrNoInterpreter = backend.ErrNoInterpreter

// withDefaults fills zero fields and checks that the paths exist, so a bad
// option fails with a message naming it instead of a terse exec error.
func (o Options) withDefaults() (Options, error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxLine <= 0 {
		o.MaxLine = frames.DefaultMaxLine
	}
	if o.markWait <= 0 {
		o.markWait = markWait
	}
	if o.posWait <= 0 {
		o.posWait = posWait
	}
	if o.termGrace <= 0 {
		o.termGrace = termGrace
	}
	if o.Python == "" {
		return o, fmt.Errorf("%w: Options.Python is empty; pass the path of a python3 executable", ErrNoInterpreter)
	}
	if o.StdinTerminal && o.Stdin == nil {
		return o, errors.New("Options.StdinTerminal without Options.Stdin: give the terminal as Stdin")
	}
	path, err := exec.LookPath(o.Python)
	if err != nil {
		return o, fmt.Errorf("%w: %s: %w", ErrNoInterpreter, trustdir.Shown(o.Python), trustdir.ShownError(unwrapExecErr(err)))
	}
	o.Python = path
	if o.Runner == "" {
		return o, errors.New("Options.Runner is empty; pass the runner.py path (runner.Path gives one)")
	}
	if st, err := os.Stat(o.Runner); err != nil {
		return o, fmt.Errorf("runner script: %w", err)
	} else if st.IsDir() {
		return o, fmt.Errorf("runner script %q is a directory, not runner.py", o.Runner)
	}
	if o.Dir != "" {
		if st, err := os.Stat(o.Dir); err != nil {
			return o, fmt.Errorf("working directory: %w", err)
		} else if !st.IsDir() {
			return o, fmt.Errorf("working directory %q is not a directory", o.Dir)
		}
	}
	return o, nil
}

// unwrapExecErr drops exec.Error's own "exec: name:" prefix, which would
// repeat the path already in our message.
func unwrapExecErr(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// childEnv returns o.Env (or this process's) with the runner's own
// variables set as o says, and only so: the sync nonce, the cells' stdin
// (fd 4: Start passes o.Stdin there), the fds shown on a terminal and
// whether fd 2 is fd 1's pipe. An inherited ask for the runner's bytecode
// (runner.BootEnv) is dropped: Start adds its own.
func childEnv(o Options, nonce string) []string {
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		if !strings.HasPrefix(kv, nonceEnv+"=") && !strings.HasPrefix(kv, stdinEnv+"=") && !strings.HasPrefix(kv, ttyEnv+"=") &&
			!strings.HasPrefix(kv, mergedEnv+"=") && !strings.HasPrefix(kv, runner.BootEnv+"=") {
			out = append(out, kv)
		}
	}
	out = append(out, nonceEnv+"="+nonce)
	if len(o.Terminal) > 0 {
		fds := make([]string, len(o.Terminal))
		for i, fd := range o.Terminal {
			fds[i] = strconv.Itoa(fd)
		}
		out = append(out, ttyEnv+"="+strings.Join(fds, ","))
	}
	if o.Stdin != nil {
		out = append(out, stdinEnv+"=4")
	} else if o.StdinWithheld != "" {
		out = append(out, stdinEnv+"=withheld", withheldEnv+"="+o.StdinWithheld)
	}
	if o.MergeStderr {
		out = append(out, mergedEnv+"=1")
	}
	return out
}

const (
	nonceEnv = "EVALHOST_SYNC_NONCE"
	stdinEnv = "EVALHOST_STDIN" // the descriptor of the cells' stdin (Options.Stdin), or "withheld"
	// why it is withheld (Options.StdinWithheld)
	withheldEnv = "EVALHOST_STDIN_WITHHELD"
	ttyEnv      = "EVALHOST_TTY" // the fds shown on a terminal (Options.Terminal), as "1,2"
)

// mergedEnv is "1" when the runner's fd 2 is its fd 1 pipe (Options.MergeStderr).
const mergedEnv = "EVALHOST_MERGED"
