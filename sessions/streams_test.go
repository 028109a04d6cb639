package sessions

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// Request.Streams takes the Python cells' stdout and stderr, after the
// sink, in order with the frames; sh cells' text still comes as frames.
func TestRequestStreams(t *testing.T) {
	for _, tt := range []struct {
		name string
		sink streamsink.Options
		want string // what streams got from the Python cell
	}{
		{"sanitised", streamsink.Options{}, "out:a\n|D|err:e\n|out:b\n"},
		{"passthrough", streamsink.Options{Passthrough: true}, "out:a\x1b[1m\n|D|err:e\n|out:b\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{Sink: tt.sink})
			var got []string
			req := Request{Cells: []Cell{
				py("import sys\nprint('a\\x1b[1m')\ndisplay('D')\nprint('e', file=sys.stderr)\nprint('b')"),
				sh("echo shell"),
			}}
			req.Streams = func(cell int, typ frames.Type, p []byte) {
				label := "out:"
				if typ == frames.TypeStderr {
					label = "err:"
				}
				got = append(got, label+string(p))
			}
			c := &collector{}
			res, err := r.Eval(t.Context(), req, func(cell int, f frames.Frame) {
				c.Cell(cell, f)
				if f.Type == frames.TypeDisplay {
					got = append(got, "D")
				}
				if (f.Type == frames.TypeStdout || f.Type == frames.TypeStderr) && cell == 0 {
					t.Errorf("emit got a %s frame of the Python cell: %q", f.Type, f.Data)
				}
			})
			if err != nil || res.Status != StatusOK {
				t.Fatalf("status %s, err %v", res.Status, err)
			}
			if s := strings.Join(got, "|"); s != tt.want {
				t.Errorf("streams and displays %q, want %q", s, tt.want)
			}
			if !strings.Contains(c.Text(frames.TypeStdout), "shell\n") {
				t.Errorf("the sh cell's text did not come as frames: %q", c.Text(frames.TypeStdout))
			}
			if n := res.Cells[0].Output.TotalBytes; n != int64(len("a\x1b[1m\n'D'\ne\nb\n")) {
				t.Errorf("the sink counted %d bytes", n)
			}
		})
	}
}
