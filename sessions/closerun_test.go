package sessions

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// CloseSession stops the running cell as a cancel does: interrupted at
// once, killed after the grace window if it holds out. Before, it was never
// interrupted and ran on until the grace window passed (a minute here).
func TestCloseSessionInterruptsTheRunningCell(t *testing.T) {
	tests := []struct {
		name  string
		grace time.Duration
		cell  Cell
		want  string // in the cell's output
	}{
		{"a python cell gets KeyboardInterrupt", time.Minute,
			py("import time\ntry:\n    print('started', flush=True)\n    time.sleep(600)\nexcept KeyboardInterrupt:\n    print('interrupted', flush=True)\n    raise"),
			"interrupted"},
		{"a shell cell's program gets SIGINT", time.Minute,
			sh("trap 'echo interrupted; exit 130' INT\necho started\nsleep 600 & wait"), "interrupted"},
		{"a cell that may detach, before it did", time.Minute,
			Cell{Language: LangPython, OnTimeout: OnTimeoutDetach, Code: "import time\ntry:\n    print('started', flush=True)\n    time.sleep(600)\nexcept KeyboardInterrupt:\n    print('interrupted', flush=True)\n    raise"},
			"interrupted"},
		{"a cell that ignores the interrupt is killed after the grace window", 300 * time.Millisecond,
			py("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('started', flush=True)\ntime.sleep(600)"),
			"started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{Grace: tt.grace})
			job, err := r.Queue(Request{Session: "c", Cwd: t.TempDir(), Cells: []Cell{{Language: tt.cell.Language, Code: tt.cell.Code, OnTimeout: tt.cell.OnTimeout, Timeout: MaxTimeout}}})
			if err != nil {
				t.Fatal(err)
			}
			started := make(chan struct{})
			var once sync.Once
			c := &collector{}
			done := make(chan Result, 1)
			go func() {
				res, _ := job.Run(context.Background(), func(i int, f frames.Frame) {
					c.Cell(i, f)
					if f.Type == frames.TypeStdout && strings.Contains(f.Data, "started") {
						once.Do(func() { close(started) })
					}
				})
				done <- res
			}()
			<-started
			at := time.Now()
			if !r.CloseSession("c") {
				t.Fatal("CloseSession found no session")
			}
			select {
			case res := <-done:
				cell := res.Cells[0]
				if cell.Status != StatusKilled || !cell.StateLost || !strings.Contains(cell.Message, "session was closed") ||
					!strings.Contains(c.Output(), tt.want) {
					t.Fatalf("%+v, output %q; want killed, state lost, saying why, output with %q", cell, c.Output(), tt.want)
				}
				t.Logf("ended %v after the close", time.Since(at).Round(time.Millisecond))
			case <-time.After(20 * time.Second):
				t.Fatalf("the cell still runs 20 s after its session was closed (grace window %v)", tt.grace)
			}
		})
	}
}
