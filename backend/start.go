package backend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// Errors of starting a local interpreter (the runner, bash), which callers
// branch on whichever backend failed to start.
var (
	// ErrStartTimeout: the interpreter did not get ready within its start
	// timeout.
	ErrStartTimeout = errors.New("interpreter did not become ready in time")
	// ErrNoInterpreter: the interpreter's executable does not name a
	// runnable file.
	ErrNoInterpreter = errors.New("interpreter not found")
)

// StartError reports a failed start with what the child wrote to stderr.
// Its message gives Err's text by trustdir.Shown (it names the
// interpreter's path, which a directory's name makes), then StderrTail a
// line at a time, each indented and printed by trustdir.Shown (quoted when
// it holds an escape sequence or another character that is not
// printable): the child's stderr echoes paths others may name and
// whatever its code prints, and raw, a line of it could pass for one of
// the message's own, or for what follows the message (a "]" closing the
// notice it is shown in), or drive the reader's terminal.
type StartError struct {
	Err        error
	StderrTail string
}

func (e *StartError) Error() string {
	// Err names paths (the interpreter's, which a directory's name makes).
	cause := trustdir.Shown(e.Err.Error())
	if e.StderrTail == "" {
		return "start interpreter: " + cause
	}
	return fmt.Sprintf("start interpreter: %s; its stderr ends with:%s", cause, shownLines(e.StderrTail))
}

// shownLines is text as lines of a message: each on its own, indented,
// printed by trustdir.Shown (a pty's "\r\n" ends a line too).
func shownLines(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\r\n"), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimSuffix(line, "\r")
	}
	return "\n    " + trustdir.ShownLines(lines, "\n    ")
}

func (e *StartError) Unwrap() error { return e.Err }
