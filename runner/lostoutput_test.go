package runner

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestLostOutputSaid: text a cell's sys.stdout or sys.stderr could not
// write (the cell closed fd 1 or 2) is not dropped in silence. python3
// says "Exception ignored ... Bad file descriptor" as it exits; a session
// lives on, so each cell whose text was lost gets a warning naming the
// stream, the error and what to do. A closed fd 1 fails no write to a
// working fd 2, as under python3 (stderr flushes stdout first here).
func TestLostOutputSaid(t *testing.T) {
	for _, c := range []struct{ name, cell, stream, stderr string }{
		{"fd 1 closed", "import os\nos.close(1)\nprint('lost')", "stdout", ""},
		{"fd 1 closed, stderr still written", "import os, sys\nos.close(1)\nprint('lost')\n_ = sys.stderr.write('kept\\n')", "stdout", "kept\n"},
		{"fd 2 closed", "import os, sys\nos.close(2)\n_ = sys.stderr.write('lost')", "stderr", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := start(t, startOpts{})
			for i, code := range []string{c.cell, "print('again')\nimport sys\n_ = sys.stderr.write('again')"} {
				r := p.run(code)
				if r.done().Status != "ok" || (i == 0 && r.stderr != c.stderr) {
					t.Fatalf("cell %d: done %+v, stderr %q, want %q; frames %+v", i, r.done(), r.stderr, c.stderr, r.frames)
				}
				w, ok := r.first(frames.TypeWarning)
				if !ok || !strings.Contains(w.Message, c.stream) || !strings.Contains(w.Message, "Bad file descriptor") {
					t.Errorf("cell %d: no warning that its %s was lost: frames %+v", i, c.stream, r.frames)
				}
			}
		})
	}
}

// A script's cell whose request says its exit reports as python3's
// (exitReports: evalhost run) leaves the lost text to that report, last
// cell or not; one without it (serve, MCP, a session) still warns.
func TestLostOutputLeftToTheExit(t *testing.T) {
	for _, c := range []struct {
		name string
		req  map[string]any
		warn bool
	}{
		{"a script's cell, exitReports", map[string]any{"inScript": true, "exitReports": true}, false},
		{"a script's cell without it", map[string]any{"inScript": true}, true},
		{"a notebook's cell, exitReports", map[string]any{"exitReports": true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := start(t, startOpts{})
			req := map[string]any{"code": "import os\nprint('lost')\nos.close(1)"}
			for k, v := range c.req {
				req[k] = v
			}
			r := p.runReq(req)
			if _, warned := r.first(frames.TypeWarning); r.done().Status != "ok" || warned != c.warn {
				t.Errorf("done %+v, warned %v, want %v; frames %+v", r.done(), warned, c.warn, r.frames)
			}
		})
	}
}
