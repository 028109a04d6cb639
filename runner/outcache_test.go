package runner

import (
	"strings"
	"testing"
)

// The output history is bounded as IPython's DisplayHook bounds it
// (cache_size 1000, cull_fraction 0.2): at the result that finds Out full,
// the oldest fifth of Out and their _N go, with IPython's warning, so a
// long session does not keep every value it ever showed. Out itself as a
// cell's value is shown, not stored in itself.
func TestOutputHistoryIsBounded(t *testing.T) {
	inBothModes(t, func(t *testing.T, p *proc) {
		defer p.close()
		for i := 1; i <= 1000; i++ {
			if res := p.run("[1] * 3"); res.stderr != "" {
				t.Fatalf("cell %d wrote %q", i, res.stderr)
			}
		}
		res := p.run("[1] * 3")
		if !strings.Contains(res.stderr, "Output cache limit (currently 1000 entries) hit.\nFlushing oldest 200 entries.") {
			t.Errorf("the 1001st result's stderr: %q", res.stderr)
		}
		res = p.run("print(len(Out), min(Out), max(Out), '_1' in globals(), '_200' in globals(), _201, _1001)")
		if res.stdout != "801 201 1001 False False [1, 1, 1] [1, 1, 1]\n" {
			t.Errorf("after the cull: %q (stderr %q)", res.stdout, res.stderr)
		}
		res = p.run("Out")
		if res.stderr != "" || p.run("print(1003 in Out)").stdout != "False\n" {
			t.Errorf("Out as a value was stored in itself (stderr %q)", res.stderr)
		}
	})
}
