package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds on a command tool's output.
const (
	maxCommandStdout = 16 << 20
	stderrTailBytes  = 2 << 10
	commandWaitDelay = 2 * time.Second // pipes held open by stray grandchildren
)

// Compiled on first use: at init it would cost every evalhost start.
var toolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// pythonKeywords cannot follow "tool." (keyword.kwlist of Python 3).
var pythonKeywords = []string{"False", "None", "True", "and", "as", "assert", "async", "await", "break",
	"class", "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
	"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
	"while", "with", "yield"}

// ParseToolFlag splits a --tool value "NAME=COMMAND". NAME must be a Python
// identifier that code can reach as tool.NAME(...): not a keyword, and not
// starting with "_" (the helper keeps those names for itself).
func ParseToolFlag(s string) (name, command string, err error) {
	name, command, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	switch {
	case !ok:
		return "", "", fmt.Errorf("--tool %q: want NAME=COMMAND, e.g. --tool search='rg --json -e \"$(jq -r .pattern)\"'", s)
	case !toolName().MatchString(name):
		return "", "", fmt.Errorf("--tool %q: tool name %q must be a Python identifier (letters, digits, _; not starting with a digit)", s, name)
	case strings.HasPrefix(name, "_"):
		return "", "", fmt.Errorf("--tool %q: tool name %q must not start with \"_\" (tool.%s is not a tool call); rename it", s, name, name)
	case slices.Contains(pythonKeywords, name):
		return "", "", fmt.Errorf("--tool %q: tool name %q is a Python keyword (tool.%s is a syntax error); rename it", s, name, name)
	case strings.TrimSpace(command) == "":
		return "", "", fmt.Errorf("--tool %q: the command after %q= is empty", s, name)
	}
	return name, command, nil
}

// CommandTools runs each tool as a shell command: `sh -c COMMAND` with the
// args JSON on stdin and EVALHOST_TOOL, EVALHOST_SESSION and EVALHOST_RUN set.
// Its stdout is the value: JSON when it parses, otherwise the text (one
// trailing newline dropped) as a JSON string, null when empty. A non-zero exit
// is an error carrying the tail of stderr. The command runs under a reaper
// (internal/reaper), so nothing it starts outlives evalhost, SIGKILL
// included. It and everything it started are killed when the call's context
// ends; when the command has exited but processes it left behind keep its
// stdout or stderr open (then the call fails and says so, rather than
// waiting for them); and when it failed. What a command that succeeded left
// running without its output runs on (on Linux, where the reaper finds it;
// elsewhere it is ended when the call returns) until it ends or the tools
// are closed: the returned Tools is an io.Closer, and [Server.Close] closes
// its tools.
func CommandTools(specs map[string]string) Tools {
	m := make(map[string]string, len(specs))
	for k, v := range specs {
		m[k] = v
	}
	return &commandTools{specs: m}
}

// commandTools runs the commands, and owns the reapers of calls whose
// background processes run on (lingering), until they end or Close.
type commandTools struct {
	specs     map[string]string
	mu        sync.Mutex
	lingering []*toolProc
	closed    bool
	ending    sync.WaitGroup // calls whose reaper is let go of in the background
}

// UnknownToolError names a tool nobody provides.
type UnknownToolError struct {
	Name  string
	Known []string
}

func (e *UnknownToolError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("unknown tool %q: no tools are configured (pass --tool NAME=COMMAND)", e.Name)
	}
	return fmt.Sprintf("unknown tool %q; known tools: %s", e.Name, strings.Join(e.Known, ", "))
}

// CommandError is a command tool that failed.
type CommandError struct {
	Name       string
	ExitCode   int    // -1 when signalled or not started
	Signal     string // set when killed by a signal
	StderrTail string
	Err        error // the start failure or context cause, if any
	// LeftoversKilled: processes the failed command left in its process
	// group were killed.
	LeftoversKilled bool
}

func (e *CommandError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tool %q ", e.Name)
	switch {
	case e.Err != nil:
		fmt.Fprintf(&b, "failed: %v", e.Err)
	case e.Signal != "":
		fmt.Fprintf(&b, "was killed by signal: %s", e.Signal)
	default:
		fmt.Fprintf(&b, "exited with status %d", e.ExitCode)
	}
	if e.LeftoversKilled {
		b.WriteString(" (processes it left running were killed)")
	}
	if t := strings.TrimSpace(e.StderrTail); t != "" {
		b.WriteString(": ")
		b.WriteString(t)
	}
	return b.String()
}

func (e *CommandError) Unwrap() error { return e.Err }

func (t *commandTools) Call(ctx context.Context, c Call) (json.RawMessage, error) {
	command, ok := t.specs[c.Name]
	if !ok {
		known := make([]string, 0, len(t.specs))
		for k := range t.specs {
			known = append(known, k)
		}
		slices.Sort(known)
		return nil, &UnknownToolError{Name: c.Name, Known: known}
	}
	t.sweep()
	out, err := t.runCommand(ctx, c, command)
	if err != nil {
		return nil, err
	}
	return commandValue(out), nil
}

func (t *commandTools) runCommand(ctx context.Context, c Call, command string) ([]byte, error) {
	p, err := startTool(ctx, c, command)
	if err != nil {
		return nil, &CommandError{Name: c.Name, ExitCode: -1, Err: err}
	}
	stopped := func() ([]byte, error) {
		p.end(true)
		return nil, &CommandError{Name: c.Name, ExitCode: -1, StderrTail: p.stderr.String(),
			Err: fmt.Errorf("stopped: %w", context.Cause(ctx))}
	}
	var status int
	var exited bool
	select {
	case status, exited = <-p.status:
	case <-ctx.Done():
		return stopped()
	}
	if !exited { // the wrapper was killed from outside before COMMAND ended
		p.end(true)
		return nil, &CommandError{Name: c.Name, ExitCode: -1, StderrTail: p.stderr.String(),
			Err: errors.New("its process was killed before it could report how the command ended")}
	}
	// What the command left in the background may hold its stdout or
	// stderr; it gets the wait delay to let go, as exec.Cmd.WaitDelay.
	held := false
	delay := time.NewTimer(commandWaitDelay)
	defer delay.Stop()
	select {
	case <-p.output:
	case <-delay.C:
		held = true
	case <-ctx.Done():
		return stopped()
	}
	switch {
	case status != 0:
		// A failed command's background processes are ended with it.
		left := p.leftovers(held)
		p.end(true)
		return nil, commandFailed(c.Name, status, left, p.stderr.String())
	case held:
		// It exited 0, but what it left in the background still holds its
		// stdout or stderr: end them instead of leaving them behind, and
		// say what happened.
		p.end(true)
		return nil, waitDelayError(c.Name, p.stderr.String())
	}
	// What it left running without its output runs on, under the reaper.
	t.linger(p)
	if p.stdout.over {
		err := fmt.Errorf("stdout is over the %d-byte limit; write large results to a file and print its path", maxCommandStdout)
		return nil, &CommandError{Name: c.Name, ExitCode: 0, Err: err}
	}
	return p.stdout.b.Bytes(), nil
}

// commandValue turns a command's stdout into a JSON value.
func commandValue(out []byte) json.RawMessage {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 {
		return json.RawMessage("null")
	}
	if json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	text := bytes.TrimSuffix(bytes.TrimSuffix(out, []byte("\n")), []byte("\r"))
	b, _ := json.Marshal(strings.ToValidUTF8(string(text), "\uFFFD"))
	return b
}

// boundedBuffer keeps up to max bytes and notes that more came.
type boundedBuffer struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); len(p) > room {
		w.over = true
		w.b.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.b.Write(p)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	b   []byte
	max int
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 2*w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	b := w.b
	if len(b) > w.max {
		b = b[len(b)-w.max:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
