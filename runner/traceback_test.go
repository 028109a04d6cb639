package runner

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// Errors raised inside the runner's own helpers (prelude, IPython shims)
// show the cell's line and the error, never the runner's files.
func TestTracebacksHideRunnerFiles(t *testing.T) {
	p := start(t, startOpts{})
	for _, code := range []string{"read('/no/such/file')", "tool.anything()", "%cd /no/such/dir"} {
		t.Run(code, func(t *testing.T) {
			r := p.run(code)
			e, ok := r.first(frames.TypeError)
			if !ok {
				t.Fatalf("no error frame: %+v", r.frames)
			}
			tb := strings.Join(e.Traceback, "\n")
			for _, internal := range []string{"prelude.py", "ipy_", "core.py", "runner.py"} {
				if strings.Contains(tb, internal) {
					t.Fatalf("traceback shows %s:\n%s", internal, tb)
				}
			}
		})
	}
}
