package daemon

import (
	"errors"
	"testing"

	"github.com/evalhost/evalhost/backend"
)

func TestCancelCause(t *testing.T) {
	cases := []struct {
		line        string
		wait, alone bool
	}{
		{`{"op":"cancel","id":"run"}`, false, false},
		{`{"op":"cancel","id":"run","wait":true}`, true, false},
		{`{"op":"cancel","id":"run","alone":true}`, false, true},
		{`{"op":"cancel","id":"run","wait":true,"alone":true}`, true, true},
		{`{"op":"kill","id":"run","wait":false,"alone":"no"}`, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			cause := cancelCause([]byte(tc.line))
			if errors.Is(cause, backend.ErrInterruptWait) != tc.wait || errors.Is(cause, backend.ErrInterruptAlone) != tc.alone {
				t.Fatalf("cause %v; want wait %v, alone %v", cause, tc.wait, tc.alone)
			}
			if !tc.wait && !tc.alone && cause != nil {
				t.Fatalf("cause %v; want nil, the plain cancel", cause)
			}
		})
	}
}
