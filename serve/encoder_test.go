package serve

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// writes records each Write, to see which lines went out together.
type writes []string

func (w *writes) Write(p []byte) (int, error) {
	*w = append(*w, string(p))
	return len(p), nil
}

// The encoder's lines are serve's and run --json's alike: a frame's own id
// (the interpreter's run id) never shows; the request id, when given, does.
func TestEncoderLines(t *testing.T) {
	runID := "r1-0-f2ad5c09e1b2c3d4"
	res := sessions.CellResult{Index: 1, Language: "py", Status: sessions.StatusOK, ExecutionCount: 2, DurationMs: 1.5,
		Output: streamsink.Dump{Text: "hi\n", TotalLines: 1, TotalBytes: 3, KeptLines: 1, KeptBytes: 3}}
	tests := []struct {
		name  string
		write func(e *Encoder)
		want  string
	}{
		{"frame in serve", func(e *Encoder) {
			e.Frame("req", 1, &frames.Frame{Type: frames.TypeStdout, ID: runID, Data: "<b>\n"})
		}, `{"cell":1,"type":"stdout","id":"req","data":"<b>\n"}`},
		{"frame in run", func(e *Encoder) {
			e.Frame("", 0, &frames.Frame{Type: frames.TypeStarted, ID: runID})
		}, `{"cell":0,"type":"started"}`},
		{"cell_end in serve", func(e *Encoder) { e.CellEnd("req", res, false) },
			`{"type":"cell_end","id":"req","cell":1,"language":"py","status":"ok","executionCount":2,"durationMs":1.5,"stateLost":false,"retried":false,"output":{"text":"hi\n","truncated":false,"totalLines":1,"totalBytes":3,"keptLines":1,"keptBytes":3}}`},
		{"cell_end in run", func(e *Encoder) { e.CellEnd("", res, false) },
			`{"type":"cell_end","cell":1,"language":"py","status":"ok","executionCount":2,"durationMs":1.5,"stateLost":false,"retried":false,"output":{"text":"hi\n","truncated":false,"totalLines":1,"totalBytes":3,"keptLines":1,"keptBytes":3}}`},
		{"end in serve", func(e *Encoder) {
			e.End("req", sessions.Result{Status: sessions.StatusError, FailedCell: 1}, 1500*time.Microsecond)
		}, `{"durationMs":1.5,"failedCell":1,"id":"req","status":"error","type":"end"}`},
		{"end in run", func(e *Encoder) {
			e.End("", sessions.Result{Status: sessions.StatusOK, FailedCell: -1}, 2*time.Millisecond)
		}, `{"durationMs":2,"failedCell":-1,"status":"ok","type":"end"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writes
			e := NewEncoder(&w)
			tt.write(e)
			if err := e.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(w, ""); got != tt.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// A cell's last frames wait for its cell_end, and the last cell_end for the
// request's end: each group goes out in one write. Flush writes what waits.
func TestEncoderHolds(t *testing.T) {
	var w writes
	e := NewEncoder(&w)
	e.Frame("r", 0, &frames.Frame{Type: frames.TypeStdout, Data: "x"})
	e.Frame("r", 0, &frames.Frame{Type: frames.TypeResult, Bundle: frames.Bundle{}})
	e.Frame("r", 0, &frames.Frame{Type: frames.TypeDone, Status: frames.StatusOK})
	if len(w) != 1 {
		t.Fatalf("%d writes after stdout, result, done; want stdout's alone: %q", len(w), w)
	}
	e.CellEnd("r", sessions.CellResult{}, true)
	e.End("r", sessions.Result{FailedCell: -1, Status: sessions.StatusOK}, 0)
	if len(w) != 2 || strings.Count(w[1], "\n") != 4 || !strings.HasSuffix(w[1], `"type":"end"}`+"\n") {
		t.Fatalf("result, done, cell_end and end went out as %q", w[1:])
	}
	e.Frame("r", 0, &frames.Frame{Type: frames.TypeError, Ename: "E"})
	if len(w) != 2 {
		t.Fatalf("an error frame was not held: %q", w)
	}
	e.Flush()
	if len(w) != 3 || !strings.Contains(w[2], `"ename":"E"`) {
		t.Fatalf("Flush wrote %q", w[2:])
	}
}

// A started frame waits for the next line, so a quick cell's frames reach
// the client in one write; a slow cell's started goes out on its own
// within startedHold.
func TestEncoderHoldsStarted(t *testing.T) {
	w := lockedWrites{wrote: make(chan struct{}, 8)}
	e := NewEncoder(&w)
	e.Frame("r", 0, &frames.Frame{Type: frames.TypeStarted})
	e.Frame("r", 0, &frames.Frame{Type: frames.TypeStdout, Data: "x"})
	if got := w.all(); len(got) != 1 || strings.Count(got[0], "\n") != 2 {
		t.Fatalf("started and stdout went out as %q, want one write", got)
	}
	e.Frame("r", 1, &frames.Frame{Type: frames.TypeStarted})
	<-w.wrote // the first write
	select {
	case <-w.wrote:
	case <-time.After(10 * time.Second):
		t.Fatalf("a held started frame was never written: %q", w.all())
	}
	if got := w.all()[1]; !strings.Contains(got, `"type":"started"`) {
		t.Fatalf("second write %q, want the started frame", got)
	}
}

// Once a held started frame went out with the lines after it, its timer is
// stopped: left armed, it would wake an idle server after every quick cell.
func TestEncoderDisarmsStartedTimer(t *testing.T) {
	tests := []struct {
		name  string
		write func(e *Encoder)
	}{
		{"next line", func(e *Encoder) {
			e.Frame("r", 0, &frames.Frame{Type: frames.TypeStdout, Data: "x"})
		}},
		{"Flush", func(e *Encoder) { _ = e.Flush() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writes
			e := NewEncoder(&w)
			e.hold = time.Hour // only a write can end the hold
			e.Frame("r", 0, &frames.Frame{Type: frames.TypeStarted})
			tt.write(e)
			if len(w) != 1 || !strings.Contains(w[0], `"type":"started"`) {
				t.Fatalf("wrote %q, want the started frame", w)
			}
			if e.timer.Stop() {
				t.Fatal("the started frame's timer is still armed after it was written")
			}
		})
	}
}

// lockedWrites is writes for an Encoder whose timer writes from its own
// goroutine.
type lockedWrites struct {
	mu    sync.Mutex
	w     writes
	wrote chan struct{} // a token per write
}

func (l *lockedWrites) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wrote <- struct{}{}
	return l.w.Write(p)
}

func (l *lockedWrites) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.w...)
}

// RawData writes its line and the bytes after it between the other lines,
// after a held started frame, and the bytes as they are.
func TestEncoderRawData(t *testing.T) {
	tests := []struct {
		name   string
		before func(e *Encoder)
	}{
		{"alone", func(e *Encoder) {}},
		{"after a held started frame", func(e *Encoder) {
			e.Frame("r", 0, &frames.Frame{Type: frames.TypeStarted})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writes
			e := NewEncoder(&w)
			e.hold = time.Hour // only a write can end the hold
			tt.before(e)
			e.RawData([]byte(`{"size":5}`+"\n"), []byte("\xff\n\x00{}"))
			e.Frame("r", 0, &frames.Frame{Type: frames.TypeStdout, Data: "x"})
			got := strings.Join(w, "")
			want := `{"size":5}` + "\n\xff\n\x00{}" + `{"cell":0,"type":"stdout","id":"r","data":"x"}` + "\n"
			if held := `{"cell":0,"type":"started","id":"r"}` + "\n"; strings.HasPrefix(got, held) {
				got = strings.TrimPrefix(got, held)
			} else if tt.name != "alone" {
				t.Fatalf("wrote %q, want the held started frame first", got)
			}
			if got != want {
				t.Fatalf("wrote %q, want %q", got, want)
			}
		})
	}
}
