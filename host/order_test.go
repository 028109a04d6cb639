package host

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// Text printed before a display must be emitted before it: the runner
// writes it to fd 1 first, but fd 1 and fd 3 are separate pipes.
func TestTextAndDisplayKeepOrder(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	const n = 200
	r := execute(t, p, context.Background(), fmt.Sprintf("for i in range(%d):\n    print(i)\n    display(i)", n))
	if r.err != nil || r.done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	var got []string
	for _, f := range r.frames {
		switch f.Type {
		case frames.TypeStdout:
			got = append(got, strings.Fields(f.Data)...)
		case frames.TypeDisplay:
			s, _ := f.Bundle.Text("text/plain")
			got = append(got, "D"+s)
		}
	}
	// The weak order first: a display never comes before the text printed
	// before it; then, with the runner's position marks, the exact order.
	at := map[string]int{}
	for i, s := range got {
		at[s] = i
	}
	for i := range n {
		text, disp := fmt.Sprint(i), fmt.Sprintf("D%d", i)
		if _, ok := at[disp]; !ok || at[text] > at[disp] {
			t.Fatalf("%s missing or before %s: %q", disp, text, got)
		}
	}
	if p.posMarks.Load() == 0 {
		t.Fatal("the runner wrote no position marks, so exact order cannot hold")
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprint(i), fmt.Sprintf("D%d", i))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("order differs at item %d: got %q, want %q (%d items, want %d)", i, got[max(0, i-3):min(len(got), i+4)], want[max(0, i-3):min(len(want), i+4)], len(got), len(want))
			}
		}
		t.Fatalf("got %d items, want %d", len(got), len(want))
	}
}

// A display streams when it is made, not at the end of the cell, whether
// or not the runner writes position marks.
func TestDisplayStreamsBeforeLaterText(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	r := execute(t, p, context.Background(), "import os, time\ndisplay('first')\ntime.sleep(0.3)\nos.write(1, b'later\\n')")
	if r.err != nil || r.done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	var got []string
	for _, f := range r.frames {
		switch f.Type {
		case frames.TypeStdout:
			got = append(got, strings.TrimSpace(f.Data))
		case frames.TypeDisplay:
			got = append(got, "display")
		}
	}
	if strings.Join(got, " ") != "display later" {
		t.Fatalf("order = %q, want the display before the later text", got)
	}
}

// Lines written alternately to sys.stdout and sys.stderr come out in the
// order written, though they travel on two pipes: the runner syncs the
// streams whenever its writes switch between them.
func TestStdoutStderrKeepOrder(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	const n = 200
	r := execute(t, p, context.Background(), fmt.Sprintf(
		"import sys\nfor i in range(%d):\n    print('o', i)\n    print('e', i, file=sys.stderr)\n    if i %% 7 == 0: display(i)", n))
	if r.err != nil || r.done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	var got, want []string
	for _, f := range r.frames {
		switch f.Type {
		case frames.TypeStdout, frames.TypeStderr:
			for _, line := range strings.Split(strings.TrimSuffix(f.Data, "\n"), "\n") {
				got = append(got, line)
			}
		case frames.TypeDisplay:
			s, _ := f.Bundle.Text("text/plain")
			got = append(got, "D"+s)
		case frames.TypeSync:
			t.Fatalf("a sync frame reached the caller")
		}
	}
	for i := range n {
		want = append(want, fmt.Sprint("o ", i), fmt.Sprint("e ", i))
		if i%7 == 0 {
			want = append(want, fmt.Sprint("D", i))
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("order differs at item %d: got %q, want %q", i, got[max(0, i-3):min(len(got), i+4)], want[max(0, i-3):min(len(want), i+4)])
			}
		}
		t.Fatalf("got %d items, want %d", len(got), len(want))
	}
}

// A cell's result follows all the text written before it, even when the
// caller reads slowly and the process has shown no position mark yet (a
// fresh interpreter whose first cells displayed nothing): the runner says
// in its ready frame that its marks will come, so the host waits for them
// instead of assuming a runner without marks.
func TestResultFollowsBulkTextOnAFreshInterpreter(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	var got []frames.Frame
	done, err := p.Execute(context.Background(), frames.Request{Code: "import sys\nsys.stdout.write('y' * 5_000_000)\n1"},
		func(f frames.Frame) {
			if f.Type == frames.TypeStdout {
				time.Sleep(2 * time.Millisecond) // a slow caller keeps text in the pipe
			}
			got = append(got, f)
		})
	if err != nil || done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", done, err)
	}
	n := 0
	for i, f := range got {
		switch f.Type {
		case frames.TypeStdout:
			n += len(f.Data)
		case frames.TypeResult:
			if n != 5_000_000 {
				t.Fatalf("result at frame %d after %d of 5000000 bytes of stdout", i, n)
			}
		}
	}
	if n != 5_000_000 {
		t.Fatalf("got %d bytes of stdout, want 5000000", n)
	}
}

// A cell that writes no text makes the runner write no marks, and its
// frames still come in order.
func TestMarklessCell(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	execute(t, p, context.Background(), "print('warm')")
	before := p.posMarks.Load()
	for i := range 20 {
		r := execute(t, p, context.Background(), fmt.Sprintf("display(%d)\n%d + 1", i, i))
		if r.err != nil || r.done.Status != frames.StatusOK {
			t.Fatalf("done = %+v, err = %v", r.done, r.err)
		}
		var got []string
		for _, f := range r.frames {
			s, _ := f.Bundle.Text("text/plain")
			got = append(got, f.Type.String()+s)
		}
		if want := fmt.Sprintf("started display%d result%d", i, i+1); strings.Join(got, " ") != want {
			t.Fatalf("frames %q, want %q", got, want)
		}
	}
	if n := p.posMarks.Load() - before; n != 0 {
		t.Fatalf("%d position marks for cells that wrote no text", n)
	}
}

// Output that bypasses the runner's writers (C code writing to fd 1 and 2
// itself) in a cell that writes nothing else still comes before the cell's
// done: the runner sends no mark for it, the host checks it routed what it
// read.
func TestUntrackedOutputPrecedesDone(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	execute(t, p, context.Background(), "import ctypes\nlibc = ctypes.CDLL(None)")
	for i := range 100 {
		r := execute(t, p, context.Background(), fmt.Sprintf(
			"libc.write(1, b'o%d\\n', %d)\nlibc.write(2, b'e%d\\n', %d)\nNone", i, len(fmt.Sprint(i))+2, i, len(fmt.Sprint(i))+2))
		if r.err != nil || r.done.Status != frames.StatusOK {
			t.Fatalf("done = %+v, err = %v", r.done, r.err)
		}
		var out, errs string
		for _, f := range r.frames {
			switch f.Type {
			case frames.TypeStdout:
				out += f.Data
			case frames.TypeStderr:
				errs += f.Data
			}
		}
		if out != fmt.Sprintf("o%d\n", i) || errs != fmt.Sprintf("e%d\n", i) {
			t.Fatalf("cell %d: stdout %q, stderr %q", i, out, errs)
		}
	}
}

// Raw writes to fd 1 and then fd 2, one after the other (os.write, a
// child's echo), are recorded in the order written, though they travel on
// two pipes and no mark separates them: the host reads the pipes in the
// order they became readable (order_linux.go). Two readers, one per pipe,
// put the second first about a third of the time: both pipes were ready
// when the runtime's poller ran, and it ran the later reader first.
func TestRawWritesKeepOrder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the host keeps the order of writes to the two pipes on Linux (epoll), doc.go")
	}
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	execute(t, p, context.Background(), "import os, subprocess")
	for _, tc := range []struct {
		name, code, want string
		times            int
	}{
		{"os.write, stdout then stderr", "os.write(1, b'a\\n'); os.write(2, b'b\\n')", "out a|err b", 100},
		{"os.write, stderr then stdout", "os.write(2, b'a\\n'); os.write(1, b'b\\n')", "err a|out b", 100},
		{"os.system", "os.system('echo a; echo b >&2')", "out a|err b", 100},
		{"subprocess", "subprocess.run('echo a >&2; echo b', shell=True)", "err a|out b", 100},
		// More than the pipe holds: the host reads stdout while it is
		// written, and stderr's line comes after all of it.
		{"3 MB of stdout, then stderr", "os.write(1, b'a' * 3_000_000 + b'\\n'); os.write(2, b'b\\n')", "out a×3000000|err b", 10},
		{"3 MB of stderr, then stdout", "os.write(2, b'a' * 3_000_000 + b'\\n'); os.write(1, b'b\\n')", "err a×3000000|out b", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.times {
				r := execute(t, p, context.Background(), tc.code+"\nNone")
				if r.err != nil || r.done.Status != frames.StatusOK {
					t.Fatalf("done = %+v, err = %v", r.done, r.err)
				}
				var got []string
				var text strings.Builder
				typ := frames.Type(0)
				flush := func() { // a stream's text, its long lines told by length
					for _, line := range strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n") {
						if len(line) > 10 && strings.Count(line, line[:1]) == len(line) {
							line = fmt.Sprintf("%s×%d", line[:1], len(line))
						}
						got = append(got, strings.TrimPrefix(typ.String(), "std")+" "+line)
					}
					text.Reset()
				}
				for _, f := range r.frames {
					if f.Type == frames.TypeStdout || f.Type == frames.TypeStderr {
						if f.Type != typ && text.Len() > 0 {
							flush()
						}
						typ = f.Type
						text.WriteString(f.Data)
					}
				}
				flush()
				if strings.Join(got, "|") != tc.want {
					t.Fatalf("cell %d: output %q, want %q", i, got, strings.Split(tc.want, "|"))
				}
			}
		})
	}
}
