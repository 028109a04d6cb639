package runner

import (
	"fmt"
	"testing"
)

// TestUncaughtErrorEvalueTakenOnce: a script's error frame's evalue is
// the str(exc) its traceback showed, taken once (the cell's __str__
// counts its calls), whether the runner's stderr shows the traceback or
// a stderr the script set to its own object got it (3.8-3.12 from the
// interpreter's printer's writes); "<unprintable E>" for a str() that
// raised, "" for an empty one, a suggestion never in it.
func TestUncaughtErrorEvalueTakenOnce(t *testing.T) {
	const classes = "n = 0\nclass E(Exception):\n    def __str__(self):\n        global n\n        n += 1\n        return 'msg%d' % n\n" +
		"class Bad(Exception):\n    def __str__(self):\n        raise ValueError\n" +
		"class Empty(Exception):\n    def __str__(self):\n        return ''\n"
	for _, stderr := range []struct{ name, code string }{
		{"own stderr", ""},
		{"replaced stderr", "import io\nsys.stderr = io.StringIO()\n"},
	} {
		t.Run(stderr.name, func(t *testing.T) {
			p := start(t, startOpts{})
			wantOK(t, p.runReq(map[string]any{"code": "import sys\n" + classes, "argv": []string{"-c"}}))
			for i, tc := range []struct{ name, code, ename, evalue string }{
				{"counted", "raise E()", "E", "msg%d"},
				{"counted again", "raise E()", "E", "msg%d"},
				{"str raises", "raise Bad()", "Bad", "<unprintable Bad>"},
				{"empty", "raise Empty()", "Empty", ""},
				{"suggestion", "prnt", "NameError", "name 'prnt' is not defined"},
				{"chained", "raise ValueError('outer') from E()", "ValueError", "outer"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := p.runReq(map[string]any{"code": stderr.code + tc.code, "inScript": true})
					e := wantError(t, c, tc.ename)
					want := tc.evalue
					if want == "msg%d" {
						want = fmt.Sprintf(want, i+1)
					}
					if e.Evalue != want {
						t.Errorf("evalue %q, want %q", e.Evalue, want)
					}
				})
			}
			wantResult("3")(t, p.run("n")) // one str() per E shown: two raised, one a cause
		})
	}
}
