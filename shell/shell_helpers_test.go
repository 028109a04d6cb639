package shell

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// startShell starts a real bash, closes it at cleanup and checks that no
// process of its session is left.
func startShell(t *testing.T, o Options) *Shell {
	t.Helper()
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start shell: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		shellCheckGone(t, s)
	})
	return s
}

// shellCheckGone fails when bash is not reaped or a member of its session
// is still alive.
func shellCheckGone(t *testing.T, s *Shell) {
	t.Helper()
	select {
	case <-s.Done():
	default:
		t.Errorf("bash %d not reaped after close", s.Pid())
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := shellSessionPids(s.Pid())
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes of session %d still alive: %v", s.Pid(), left)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shellRun is what one Execute emitted and returned.
type shellRun struct {
	frames []frames.Frame
	done   frames.Frame
	err    error
	took   time.Duration
}

func (r *shellRun) stdout() string {
	var b strings.Builder
	for _, f := range r.frames {
		if f.Type == frames.TypeStdout {
			b.WriteString(f.Data)
		}
	}
	return b.String()
}

func (r *shellRun) errorFrame() (frames.Frame, bool) {
	for _, f := range r.frames {
		if f.Type == frames.TypeError {
			return f, true
		}
	}
	return frames.Frame{}, false
}

func shellExec(ctx context.Context, s *Shell, req frames.Request) *shellRun {
	r := &shellRun{}
	t0 := time.Now()
	r.done, r.err = s.Execute(ctx, req, func(f frames.Frame) { r.frames = append(r.frames, f) })
	r.took = time.Since(t0)
	return r
}

func shellCode(s *Shell, code string) *shellRun {
	return shellExec(context.Background(), s, frames.Request{ID: "c", Code: code})
}

func shellStr(s string) *string { return &s }
