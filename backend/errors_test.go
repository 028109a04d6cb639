package backend

import (
	"errors"
	"testing"
)

func TestDeathErrorSaysHow(t *testing.T) {
	tests := []struct {
		name string
		err  DeathError
		how  string
	}{
		{"exit code", DeathError{ExitCode: 3, StderrTail: "bye\n"}, "exit code 3"},
		{"signal", DeathError{ExitCode: -1, Signal: "killed"}, "signal: killed"},
		// A gateway never learns the exit code; what it reported is the news.
		{"reason instead of an unknown exit code", DeathError{ExitCode: -1, Reason: `the gateway reported kernel status "dead"`},
			`the gateway reported kernel status "dead"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.How(); got != tc.how {
				t.Errorf("How() = %q, want %q", got, tc.how)
			}
			if got, want := tc.err.Error(), "interpreter died: "+tc.how; got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
			if !errors.Is(&tc.err, ErrDied) {
				t.Errorf("%v does not match ErrDied", &tc.err)
			}
		})
	}
}
