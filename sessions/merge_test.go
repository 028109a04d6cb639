package sessions

import (
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// Config.MergeStderr reaches the Python interpreters (host.Options): a
// cell's writes to fd 1 and 2, its own and a child's, come through
// Request.Streams as stdout, in the order written; without it, stdout and
// stderr stay apart. An sh cell is not affected, and the cell's children
// are not told (EVALHOST_MERGED is the runner's).
func TestMergeStderrReachesTheRunner(t *testing.T) {
	const code = "import os, subprocess\nfor i in range(20):\n    os.write(1, b'o%d ' % i)\n    os.write(2, b'e%d ' % i)\n" +
		"_ = subprocess.run('echo -n child; echo -n \" told=${EVALHOST_MERGED-no} \" >&2', shell=True)"
	var all, out, errs strings.Builder
	for i := range 20 {
		o, e := "o"+strconv.Itoa(i)+" ", "e"+strconv.Itoa(i)+" "
		all.WriteString(o + e)
		out.WriteString(o)
		errs.WriteString(e)
	}
	all.WriteString("child told=no ")
	out.WriteString("child")
	errs.WriteString(" told=no ")
	for _, merged := range []bool{true, false} {
		t.Run(map[bool]string{true: "merged", false: "apart"}[merged], func(t *testing.T) {
			r := newTestRegistry(t, Config{MergeStderr: merged, Sink: streamsink.Options{Passthrough: true}})
			got := map[frames.Type]*strings.Builder{frames.TypeStdout: {}, frames.TypeStderr: {}}
			req := Request{Cells: []Cell{py(code), sh("echo shell")}}
			req.Streams = func(cell int, typ frames.Type, p []byte) { got[typ].Write(p) }
			res, c := eval(t, r, req)
			if res.Status != StatusOK {
				t.Fatalf("status %s: %+v", res.Status, res.Cells)
			}
			gotOut, gotErr := got[frames.TypeStdout].String(), got[frames.TypeStderr].String()
			if merged && (gotOut != all.String() || gotErr != "") {
				t.Errorf("stdout %q, stderr %q; want all as stdout, in order: %q", gotOut, gotErr, all.String())
			}
			if !merged && (gotOut != out.String() || gotErr != errs.String()) {
				t.Errorf("stdout %q, stderr %q; want %q and %q", gotOut, gotErr, out.String(), errs.String())
			}
			if !strings.Contains(c.Text(frames.TypeStdout), "shell\n") {
				t.Errorf("the sh cell's text %q", c.Text(frames.TypeStdout))
			}
		})
	}
}
