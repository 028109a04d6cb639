package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestTranscriptGolden pins what a fixed sequence of cells sends, frame by
// frame, against testdata/transcript-py<major.minor>.golden (tracebacks
// differ between Python versions). Run with -update to rewrite it.
func TestTranscriptGolden(t *testing.T) {
	p := start(t, startOpts{})
	minor := strings.Join(strings.SplitN(p.ready.Python, ".", 3)[:2], ".")
	golden := filepath.Join("testdata", "transcript-py"+minor+".golden")
	var b strings.Builder
	for _, code := range []string{
		"x = 6\nprint('x is', x)\nx * 7",
		"import sys\nprint('to stderr', file=sys.stderr)\nNone",
		"def f(n):\n    return 10 / n\n\nf(0)",
		"for i in range(3)\n    pass",
		"class H:\n    def _repr_html_(self): return '<i>h</i>'\n    def __repr__(self): return 'H'\ndisplay(H(), metadata={'k': 1})\nH()",
		"input('? ')",
		"import asyncio\nawait asyncio.sleep(0)\n'awaited'",
		"raise SystemExit(2)",
	} {
		c := p.run(code)
		fmt.Fprintf(&b, "### %q\n", code)
		for _, f := range c.frames {
			b.WriteString(render(f))
		}
		fmt.Fprintf(&b, "stdout %q\nstderr %q\n\n", c.stdout, c.stderr)
	}
	got := b.String()
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if os.IsNotExist(err) {
		t.Skipf("no %s for this Python; create it with go test -run Golden -update", golden)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("transcript differs from %s (rerun with -update if intended):\n%s", golden, got)
	}
}

// render prints one frame without what varies between runs.
func render(f frames.Frame) string {
	s := f.Type.String() + " " + f.ID
	switch f.Type {
	case frames.TypeDisplay, frames.TypeResult:
		for _, k := range []string{"text/plain", "text/html"} {
			if v, ok := f.Bundle[k]; ok {
				s += fmt.Sprintf(" %s=%s", k, v)
			}
		}
		if f.Metadata != nil {
			s += " metadata=" + string(f.Metadata)
		}
		if f.ExecutionCount != 0 {
			s += fmt.Sprintf(" count=%d", f.ExecutionCount)
		}
	case frames.TypeError:
		s += fmt.Sprintf(" %s: %q\n  %s", f.Ename, f.Evalue, strings.Join(f.Traceback, "\n  "))
	case frames.TypeInput:
		s += fmt.Sprintf(" prompt=%q", f.Prompt)
	case frames.TypeDone:
		s += fmt.Sprintf(" %s count=%d cancelled=%v", f.Status, f.ExecutionCount, f.Cancelled)
	}
	return s + "\n"
}
