package runner

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A plain value's result frame is kept until the cell's done and placed
// among the cell's output there (cells.Cell.keep_result): text written
// before it, by print, os.write and a child, still comes before it; what
// comes after it in the cell's run (a post-cell hook's print, an error
// raised after the value was shown) still comes after it.
func TestKeptResultKeepsItsPlace(t *testing.T) {
	p := start(t, startOpts{})
	p.run("print('warm')")

	for _, tc := range []struct{ name, code, stdout, stderr string }{
		{"stdout before", "import os, subprocess\nprint('a')\nos.write(1, b'b\\n')\nsubprocess.run(['echo', 'c'])\n40 + 2",
			"a\nb\nc\n<1>", "<1>"}, // the child might have written to stderr too
		{"stderr before", "import os, subprocess, sys\nprint('a', file=sys.stderr)\nos.write(2, b'b\\n')\n" +
			"subprocess.run('echo c >&2', shell=True)\n40 + 2", "<1>", "a\nb\nc\n<1>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := p.run(tc.code)
			if r.raw[1] != tc.stdout || r.raw[2] != tc.stderr {
				t.Fatalf("stdout %q, stderr %q: want %q, %q (all text before the result's mark <1>)",
					r.raw[1], r.raw[2], tc.stdout, tc.stderr)
			}
			wantFrames(t, r, "started result:42 done:ok")
		})
	}

	t.Run("hook after", func(t *testing.T) {
		defer p.run("get_ipython().events.callbacks['post_run_cell'].clear()")
		r := p.run("get_ipython().events.register('post_run_cell', lambda *a: print('hook'))\n7")
		if r.raw[1] != "<1>hook\n" {
			t.Fatalf("stdout %q: want the post-cell hook's text after the result's mark <1>", r.raw[1])
		}
		wantFrames(t, r, "started result:7 done:ok")
		r = p.run("8")
		if r.raw[1] != "<1>hook\n" {
			t.Fatalf("stdout %q: want the post-cell hook's text after the result's mark <1>", r.raw[1])
		}
		wantFrames(t, r, "started result:8 done:ok")
	})

	t.Run("interrupt after", func(t *testing.T) {
		// A profile function raises KeyboardInterrupt in the runner's own
		// code after the value was shown and before the cell's end.
		r := p.run("import sys\ndef _stop(frame, event, arg):\n" +
			"    if event == 'call' and frame.f_code.co_name == '_flush_figures':\n" +
			"        sys.setprofile(None)\n        raise KeyboardInterrupt\n" +
			"sys.setprofile(_stop)\n2")
		wantFrames(t, r, "started result:2 error:KeyboardInterrupt done:error")
	})

	t.Run("no text", func(t *testing.T) {
		r := p.run("3")
		if r.raw[1] != "" || r.raw[2] != "" || r.done().Unmarked != 3 {
			t.Fatalf("stdout %q, stderr %q, done %+v: want no marks", r.raw[1], r.raw[2], r.done())
		}
		if f, _ := r.first(frames.TypeResult); f.Pos != 1 {
			t.Fatalf("result %+v: want pos 1", f)
		}
	})
}

// wantFrames checks a cell's frames as "type[:text/plain|ename|status] ...".
func wantFrames(t *testing.T, r cellResult, want string) {
	t.Helper()
	var got []string
	for _, f := range r.frames {
		s := f.Type.String()
		switch f.Type {
		case frames.TypeResult:
			s += ":" + text(t, f.Bundle, "text/plain")
		case frames.TypeError:
			s += ":" + f.Ename
		case frames.TypeDone:
			s += ":" + string(f.Status)
		}
		got = append(got, s)
	}
	if strings.Join(got, " ") != want {
		t.Fatalf("frames %q, want %q", strings.Join(got, " "), want)
	}
}
