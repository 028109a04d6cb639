package runner

import (
	"bytes"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// FuzzRequestLine feeds the runner's request parser arbitrary lines: each
// invalid one must give a warning frame, and the runner must go on serving.
// Lines that are valid requests are skipped: they would run fuzzed code.
func FuzzRequestLine(f *testing.F) {
	for _, s := range []string{"", "x", "{", "[]", `{"id":5}`, `{"type":7}`, `{"id":"a","code":1}`,
		`{"type":"exit"`, "\xff\xfe", `{"id":"a","env":{"X":1}}`, `"str"`, `{"a":NaN}`, `{"id":"\ud800"}`} {
		f.Add([]byte(s))
	}
	p := start(f, startOpts{})
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\n\r") || len(bytes.TrimSpace(line)) == 0 {
			t.Skip("one non-blank line at a time")
		}
		if _, err := frames.DecodeRequest(line); err == nil {
			t.Skip("a valid request")
		}
		p.tb = t
		if _, err := p.req.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
		switch f := p.next(); {
		case f.Type == frames.TypeWarning:
		case f.Type == frames.TypeStarted: // the runner accepted what Go rejects: it must finish it
			p.collect(f.ID, nil)
		default:
			t.Fatalf("line %q: got %+v, want a warning", line, f)
		}
		wantResult("2")(t, p.run("1 + 1"))
	})
}
