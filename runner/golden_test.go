package runner

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// TestTranscriptGolden pins what a fixed sequence of cells sends, frame by
// frame, against testdata/transcript.golden, whatever the Python version:
// render drops what tracebacks vary in between versions (the caret lines
// under the failing expression). Run with -update to rewrite it.
func TestTranscriptGolden(t *testing.T) {
	p := start(t, startOpts{})
	var b strings.Builder
	for _, code := range []string{
		"x = 6\nprint('x is', x)\nx * 7",
		"import sys\nprint('to stderr', file=sys.stderr)\nNone",
		"def f(n):\n    return 10 / n\n\nf(0)",
		"x = 1\nreturn x",
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
	testkit.Golden(t, filepath.Join("testdata", "transcript.golden"), []byte(b.String()))
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
		s += fmt.Sprintf(" %s: %q\n  %s", f.Ename, f.Evalue, strings.Join(stableTraceback(f.Traceback), "\n  "))
	case frames.TypeInput:
		s += fmt.Sprintf(" prompt=%q", f.Prompt)
	case frames.TypeDone:
		s += fmt.Sprintf(" %s count=%d cancelled=%v", f.Status, f.ExecutionCount, f.Cancelled)
	}
	return s + "\n"
}

// stableTraceback drops the caret lines (~~~^~~) that Python 3.11 began to
// print under the failing expression and later versions print for other
// expressions, keeping what every version says.
func stableTraceback(tb []string) []string {
	var out []string
	for _, text := range tb {
		for line := range strings.SplitSeq(text, "\n") {
			if strings.Trim(line, " ^~") != "" || line == "" {
				out = append(out, line)
			}
		}
	}
	return out
}
