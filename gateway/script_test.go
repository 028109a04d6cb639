package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A script cell (frames.Request.Script) shows no value, as `ipython FILE`
// runs one, and the kernel's next cell shows its last expression again: the
// interactivity the start snippet set aside for the script is put back,
// also after a script that raised.
func TestScriptCellShowsNoValue(t *testing.T) {
	k := shared(t)
	for _, c := range []struct {
		name   string
		req    frames.Request
		result bool
	}{
		{"a script", frames.Request{ID: "script", Code: "x = 41\nx + 1", Script: true}, false},
		{"a notebook cell after it", frames.Request{ID: "cell", Code: "x + 1"}, true},
		{"a script that raises", frames.Request{ID: "raises", Code: "x + 1\n1/0", Script: true}, false},
		{"a notebook cell after that", frames.Request{ID: "cell2", Code: "x + 1"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := run(t, k, context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			if shown := strings.Contains(strings.Join(got, "\n"), "result:"); shown != c.result {
				t.Errorf("frames %q: a result %v, want %v", got, shown, c.result)
			}
		})
	}
}
