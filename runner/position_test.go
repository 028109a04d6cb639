package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// Every frame that has a place among the cell's text carries its place,
// from 1; a pipe the runner wrote to since its last mark gets a mark with
// that number before the frame, a clean one is named in the frame's
// "unmarked" and gets the mark before its next bytes, if any. A cell that
// writes no text gets no marks at all, not even at its end.
func TestPositionMarks(t *testing.T) {
	p := start(t, startOpts{})
	// The first cell's pipes hold start-up's state. IPython is imported
	// here: 8.12's import (on 3.8) starts a subprocess, whose possible
	// output rightly marks both pipes.
	p.run("print('warm')\nimport IPython.display")
	tests := []struct {
		name string
		code string
		want [3][]int // mark numbers on fd 1 and fd 2
	}{
		{"text only", "print('a')", [3][]int{}},
		{"display between prints", "print('a')\ndisplay(1)\nprint('b')\ndisplay(2)", [3][]int{1: {1, 2}}},
		{"result", "print('a')\n40 + 2", [3][]int{1: {1}}},
		{"no text", "40 + 2", [3][]int{}},
		{"display then text on the other pipe", "import sys\ndisplay(1)\nprint('e', file=sys.stderr)", [3][]int{2: {1}}},
		{"error", "print('a')\n1/0", [3][]int{1: {1}}},
		{"input", "input('x? ')", [3][]int{}},
		{"subprocess output before a display", "import os\nos.system('echo x')\ndisplay(1)", [3][]int{1: {1}, 2: {1}}},
		{"update and clear", "h = display('x', display_id=True)\nh.update('y')\nfrom IPython.display import clear_output\nclear_output()", [3][]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.run(tt.code)
			k := 0
			for _, f := range r.frames {
				switch f.Type {
				case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeClearOutput,
					frames.TypeResult, frames.TypeError, frames.TypeInput:
					k++
					if f.Pos != k {
						t.Fatalf("frame %d of the cell has pos %d: %+v", k, f.Pos, r.frames)
					}
				}
			}
			for fd := 1; fd <= 2; fd++ {
				if fmt.Sprint(r.positions[fd]) != fmt.Sprint(tt.want[fd]) {
					t.Fatalf("fd %d: position marks %v, want %v; frames %+v", fd, r.positions[fd], tt.want[fd], r.frames)
				}
			}
			if tt.name == "no text" && r.done().Unmarked != 3 {
				t.Fatalf("done of a cell without text: unmarked = %d, want 3 (no end marks)", r.done().Unmarked)
			}
		})
	}
}

// Bytes on fd 1 that no writer of the runner's put there (C code, a child)
// and the host has not read yet get a mark before the next placed frame
// (FIONREAD, wire._clean): the host could not otherwise tell them from the
// frame's place. The cell points the runner's copy of the stdout pipe at a
// pipe nobody reads for two displays, the first behind bytes left there,
// the second behind none.
func TestUnreadBytesGetAMark(t *testing.T) {
	p := start(t, startOpts{})
	p.run("0") // start-up's state: both pipes get the end marks
	r := p.run(`import os, sys
wire = sys.modules["_evalhost_wire"]
r, w = os.pipe()
saved = wire._pipes
wire._pipes = [saved[0], w, saved[2]]
try:
    wire._os_write(w, b"c-level\n")  # the real write: none of the runner's writers sees it
    display(1)
    first = os.read(r, 4096)
    display(2)
finally:
    wire._pipes = saved
os.close(w)
second = os.read(r, 4096)  # the write end closed: what is left, then EOF
os.close(r)
(first.startswith(b"c-level\n") and b"EVH" in first, second)`)
	if d := r.done(); d.Status != frames.StatusOK {
		t.Fatalf("done %+v; frames %+v", d, r.frames)
	}
	var unmarked []uint8
	for _, f := range r.frames {
		if f.Type == frames.TypeDisplay {
			unmarked = append(unmarked, f.Unmarked)
		}
	}
	// The first display marks fd 1 (the bytes left there), not fd 2; the
	// second, with fd 1 read to its end, marks neither.
	if fmt.Sprint(unmarked) != "[2 3]" {
		t.Errorf("the displays' unmarked %v, want [2 3]; frames %+v", unmarked, r.frames)
	}
	wantResult("(True, b'')")(t, r)
}

// A cell's started frame waits for the cell's next frame, but not for its
// end: a cell that blocks without output still gets it (the flusher's
// tick), so the host can interrupt it.
func TestStartedNotHeldToTheEnd(t *testing.T) {
	p := start(t, startOpts{})
	gate := filepath.Join(t.TempDir(), "go")
	p.send(map[string]any{"id": "slow", "code": fmt.Sprintf(
		"import os, time\nwhile not os.path.exists(%q):\n    time.sleep(0.005)", gate)})
	if f := p.next(); f.Type != frames.TypeStarted || f.ID != "slow" {
		t.Fatalf("first frame %+v, want started while the cell waits", f)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := p.collect("slow", nil)
	if r.done().Status != frames.StatusOK {
		t.Fatalf("done %+v", r.done())
	}
}

// The interpreter's last cell (the request's "last": the exit follows)
// ends with its end mark on every pipe, text or not: what the exit writes
// there (an atexit handler's print) is then after done, where the host
// puts it. Without the mark, `run -c "import atexit;
// atexit.register(print, 'bye')" -c 1/0 2>&1` printed bye before the
// traceback now and then (the host took bye for the cell's text, routed
// ahead of the error frame that waited for its check).
func TestLastCellMarksItsEnd(t *testing.T) {
	p := start(t, startOpts{})
	p.run("0") // start-up's state: both pipes get the end marks
	p.run("0") // the first FIONREAD is asked here: pipes found clean from now on
	for _, tc := range []struct {
		name string
		req  map[string]any
		want uint8 // done's unmarked
	}{
		{"a quiet cell, not last", map[string]any{"code": "x = 1"}, 3},
		{"a quiet last cell", map[string]any{"code": "x = 1", "last": true}, 0},
		{"a script's failing last cell", map[string]any{"code": "1/0", "last": true, "inScript": true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := p.runReq(tc.req)
			if got := r.done().Unmarked; got != tc.want {
				t.Errorf("done's unmarked %d, want %d; frames %+v", got, tc.want, r.frames)
			}
		})
	}
}
