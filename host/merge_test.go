package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// With MergeStderr the runner's fd 2 is its fd 1 pipe: what a cell, its
// children and os.write put on either arrives in the order written, all
// of it as stdout, and a traceback keeps its place among it. Without it
// the two streams stay apart, each in its own order.
func TestMergeStderrKeepsTheWritersOrder(t *testing.T) {
	const n = 40
	var want, wantOut, wantErr strings.Builder
	for i := range n {
		for _, s := range []string{"out", "err"} {
			line := s + string(rune('a'+i%26)) + "\n"
			want.WriteString(line)
			if s == "out" {
				wantOut.WriteString(line)
			} else {
				wantErr.WriteString(line)
			}
		}
	}
	shell := fmt.Sprintf("import subprocess\n_ = subprocess.run('for c in %s; do echo out$c; echo err$c >&2; done', shell=True)\n", letters(n))
	raw := fmt.Sprintf("import os\nfor i in range(%d):\n    os.write(1, b'out%%c\\n' %% (97 + i %% 26))\n    os.write(2, b'err%%c\\n' %% (97 + i %% 26))\n", n)
	printed := fmt.Sprintf("import sys\nfor i in range(%d):\n    print('out' + chr(97 + i %% 26), flush=True)\n    print('err' + chr(97 + i %% 26), file=sys.stderr)\n", n)
	cases := []struct {
		name, code string
	}{
		{"a child's writes", shell},
		{"os.write", raw},
		{"print, flushed", printed},
	}
	for _, c := range cases {
		for _, merged := range []bool{true, false} {
			name := c.name + "/apart"
			if merged {
				name = c.name + "/merged"
			}
			t.Run(name, func(t *testing.T) {
				checkClean(t, time.Minute)
				p := startPy(t, func(o *Options) { o.MergeStderr = merged })
				r := execute(t, p, context.Background(), c.code)
				if r.err != nil || r.done.Status != frames.StatusOK {
					t.Fatalf("done = %+v, err = %v\n%s", r.done, r.err, dumpFrames(r.frames))
				}
				if merged {
					if r.stdout() != want.String() || r.stderr() != "" {
						t.Fatalf("stdout %q, stderr %q; want all of it as stdout, in the order written: %q", r.stdout(), r.stderr(), want.String())
					}
					return
				}
				if r.stdout() != wantOut.String() || r.stderr() != wantErr.String() {
					t.Fatalf("stdout %q, stderr %q; want %q and %q", r.stdout(), r.stderr(), wantOut.String(), wantErr.String())
				}
			})
		}
	}
}

// Merged, the runner's streams flush as they do apart (stdout before a
// stderr write, a child or os.write, the timed flush), so the one stream
// is in the program's order, as python3 -u writes it: nothing waits in
// stdout's buffer behind later stderr, a traceback or an exit's output.
func TestMergeStderrKeepsTheProgramsOrder(t *testing.T) {
	c := []string{"-c"}
	cases := []struct {
		name, code string
		argv       []string // nil: as a FILE's cell
		want       string
		message    string // done's exitMessage
	}{
		{"print, then stderr", "import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')\n", nil, "a\nb\nc\n", ""},
		{"print, then a child", "import subprocess\nprint('a')\n_ = subprocess.run('echo b; echo c >&2', shell=True)\nprint('d')\n", nil, "a\nb\nc\nd\n", ""},
		{"print, then os.write", "import os\nprint('a')\nos.write(2, b'b\\n')\n", nil, "a\nb\n", ""},
		{"a traceback after output", "import sys\nprint('a')\nsys.stderr.write('e')\n1/0\n", nil, "a\ne<ZeroDivisionError>", ""},
		{"-c: a traceback after output", "import sys\nprint('a')\nsys.stderr.write('e')\n1/0\n", c, "a\ne<ZeroDivisionError>", ""},
		{"-c: an atexit handler after output", "import atexit, sys\nprint('a')\n_ = atexit.register(print, 'b', file=sys.stderr)\n", c, "a\nb\n", ""},
		// A script's last cell: the runner writes it, as python3 does before its exit.
		{"-c: sys.exit's message after output", "import sys\nprint('a')\nsys.exit('bye')\n", c, "a\nbye\n<SystemExit>", "bye"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkClean(t, time.Minute)
			p := startPy(t, func(o *Options) { o.MergeStderr = true })
			p.ExitAfterNextCell()
			var got strings.Builder
			done, err := p.Execute(context.Background(), frames.Request{Code: tc.code, Argv: tc.argv}, func(f frames.Frame) {
				switch f.Type {
				case frames.TypeStdout:
					got.WriteString(f.Data)
				case frames.TypeStderr:
					t.Errorf("a stderr frame %q: merged, all text is stdout", f.Data)
				case frames.TypeError:
					got.WriteString("<" + f.Ename + ">")
				}
			})
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got.String() != tc.want {
				t.Fatalf("got %q, want %q", got.String(), tc.want)
			}
			if done.ExitMessage != tc.message {
				t.Errorf("done's exitMessage %q, want %q", done.ExitMessage, tc.message)
			}
		})
	}
}

// Merged, what the interpreter writes before it is ready (on its fd 2,
// now fd 1's pipe) is still the start error's tail.
func TestMergeStderrKeepsTheStartErrorTail(t *testing.T) {
	for _, merged := range []bool{true, false} {
		t.Run(map[bool]string{true: "merged", false: "apart"}[merged], func(t *testing.T) {
			checkClean(t, time.Minute)
			o := pyOptions(t)
			o.MergeStderr = merged
			o.Args = []string{"-c", "import sys; sys.stderr.write('cannot start: bad site\\n'); sys.exit(3)"}
			p, err := Start(context.Background(), o)
			var se *StartError
			if err == nil {
				p.Close()
				t.Fatal("started")
			}
			if !errors.As(err, &se) || !strings.Contains(se.StderrTail, "cannot start: bad site") {
				t.Fatalf("err %v; want a StartError whose tail has the interpreter's message", err)
			}
		})
	}
}

func letters(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(byte('a' + i%26))
	}
	return b.String()
}
