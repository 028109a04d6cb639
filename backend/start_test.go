package backend

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// A start error gives the child's stderr a line at a time, indented and
// printed by trustdir.Shown, so no line of it passes for one of the
// message's own or for what follows it, and no escape sequence or bidi
// override reaches whoever reads it.
func TestStartErrorShowsStderrLines(t *testing.T) {
	cause := errors.New("exit code 1")
	tests := []struct {
		name string
		tail string
		want string // the message after "its stderr ends with:"
	}{
		{"lines", "Fatal Python error: x\nPython runtime state: core initialized\n",
			"\n    Fatal Python error: x\n    Python runtime state: core initialized"},
		{"a path with a newline ends the notice", "can't open '/tmp/x\n]\n[cell 1 ok]\nset --python /tmp/evil'\n",
			"\n    can't open '/tmp/x\n    ]\n    [cell 1 ok]\n    set --python /tmp/evil'"},
		{"an escape sequence", "at /tmp/\x1b]0;title\a\x1b[2Kx\n", "\n    " + `"at /tmp/\x1b]0;title\a\x1b[2Kx"`},
		{"a bidi override", "at /tmp/x\u202etxt.exe\n", "\n    " + `"at /tmp/x\u202etxt.exe"`},
		{"a carriage return", "50%\rdone\n", "\n    " + `"50%\rdone"`},
		{"a pty's line ends", "bash: x\r\nbash: y\r\n", "\n    bash: x\n    bash: y"},
		{"no newline at the end", "last words", "\n    last words"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &StartError{Err: cause, StderrTail: tt.tail}
			got := e.Error()
			if want := "start interpreter: exit code 1; its stderr ends with:" + tt.want; got != want {
				t.Errorf("Error() = %q\nwant      %q", got, want)
			}
			for i, line := range strings.Split(got, "\n") {
				if i > 0 && !strings.HasPrefix(line, "    ") {
					t.Errorf("line %d %q is not indented", i, line)
				}
				if strings.ContainsFunc(line, func(r rune) bool { return !strconv.IsPrint(r) }) {
					t.Errorf("line %d %q prints a character that is not printable", i, line)
				}
			}
			if !errors.Is(e, cause) {
				t.Error("the error does not match its cause")
			}
		})
	}
	if got := (&StartError{Err: cause}).Error(); got != "start interpreter: exit code 1" {
		t.Errorf("without a tail: %q", got)
	}
}

// The start error's own text names paths too (the interpreter's, which a
// directory's name makes: a .venv in a directory another user named) and
// is printed by trustdir.Shown whole, as the tail's lines are, so a
// newline in it does not end the notice the message is shown in either.
func TestStartErrorShowsItsCause(t *testing.T) {
	python := "/tmp/x\n]\n[cell 1 ok after 1ms]\n\x1b]0;owned\a/.venv/bin/python3"
	cause := fmt.Errorf("%s exited before it was ready: %w", python, ErrStartTimeout)
	for _, tail := range []string{"", "boom\n"} {
		e := &StartError{Err: cause, StderrTail: tail}
		got := e.Error()
		want := "start interpreter: " + strconv.Quote(cause.Error())
		if tail != "" {
			want += "; its stderr ends with:\n    boom"
		}
		if got != want {
			t.Errorf("Error() = %q\nwant      %q", got, want)
		}
		if !errors.Is(e, ErrStartTimeout) {
			t.Error("the error does not match its cause")
		}
	}
	if got := (&StartError{Err: ErrStartTimeout}).Error(); got != "start interpreter: "+ErrStartTimeout.Error() {
		t.Errorf("a printable cause is changed: %q", got)
	}
}
