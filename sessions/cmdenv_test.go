package sessions

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestRequestEnviron: a request's Environ is what the interpreters it
// starts get, and a running one gets the followed variables that differ
// from what it last got, before the request's first cell of its language
// (so a cell's own change lasts while the requests' do not change); the
// start-only ones that differ are told on the first Python cell, once.
// A request without Environ (a serve client's) changes nothing.
func TestRequestEnviron(t *testing.T) {
	r := newTestRegistry(t, Config{Environ: []string{"PATH=/registry", "PYTHONPATH=/pp-registry"}})
	dir := t.TempDir()
	const show = "import os, sys\nprint(os.environ.get('PATH'), os.environ.get('VIRTUAL_ENV'), os.environ.get('PYTHONPATH'), '/pp-a' in sys.path)"
	const tag = "import os\nos.environ['PATH'] += ':/own'"
	a := []string{"PATH=/a", "PYTHONPATH=/pp-a"}
	for _, tc := range []struct {
		name    string
		environ []string
		env     map[string]string
		cells   []Cell
		stdout  string
		notice  string // in stderr; "": no stderr
	}{
		{name: "started with it", environ: a, cells: []Cell{py(show)}, stdout: "/a None /pp-a True\n"},
		{name: "without Environ", cells: []Cell{py(show)}, stdout: "/a None /pp-a True\n"},
		{name: "PATH and VIRTUAL_ENV followed", environ: []string{"PATH=/b", "VIRTUAL_ENV=/v", "PYTHONPATH=/pp-a"}, cells: []Cell{py(show)},
			stdout: "/b /v /pp-a True\n"},
		{name: "unset followed", environ: []string{"PYTHONPATH=/pp-a"}, cells: []Cell{py(show)}, stdout: "None None /pp-a True\n"},
		{name: "a cell's change lasts into the next cell", environ: a, cells: []Cell{py(tag), py(show)},
			stdout: "/a:/own None /pp-a True\n"},
		{name: "and into the next request with the same", environ: a, cells: []Cell{py(show)}, stdout: "/a:/own None /pp-a True\n"},
		{name: "Env wins", environ: []string{"PATH=/b", "PYTHONPATH=/pp-a"}, env: map[string]string{"PATH": "/env"}, cells: []Cell{py(show)},
			stdout: "/env None /pp-a True\n"},
		{name: "after Env, the command's again", environ: []string{"PATH=/b", "PYTHONPATH=/pp-a"}, cells: []Cell{py(show)},
			stdout: "/b None /pp-a True\n"},
		{name: "start-only told once", environ: []string{"PATH=/b"}, cells: []Cell{py(show), py(show)},
			stdout: "/b None /pp-a True\n/b None /pp-a True\n",
			notice: `[evalhost: session s's py interpreter started with PYTHONPATH /pp-a, and this command's is unset: python reads it only as it starts (sys.path), so the cells run with what it read then; "evalhost kill s" ends the session`},
		{name: "a shell follows PYTHONPATH", environ: a, cells: []Cell{sh("echo $PATH $PYTHONPATH")}, stdout: "/a /pp-a\n"},
		{name: "a running shell too", environ: []string{"PATH=/c:/bin:/usr/bin", "PYTHONPATH=/pp-c"}, cells: []Cell{sh("echo $PATH $PYTHONPATH")},
			stdout: "/c:/bin:/usr/bin /pp-c\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, c := eval(t, r, Request{Session: "s", Cwd: dir, Environ: tc.environ, Env: tc.env, Cells: tc.cells})
			out, stderr := c.Text(frames.TypeStdout), c.Text(frames.TypeStderr)
			if res.Status != StatusOK || out != tc.stdout {
				t.Fatalf("status %s, stdout %q, stderr %q; want %q", res.Status, out, stderr, tc.stdout)
			}
			if tc.notice == "" && stderr != "" || !strings.Contains(stderr, tc.notice) || strings.Count(stderr, "[evalhost:") > 1 {
				t.Fatalf("stderr %q; want %q once", stderr, tc.notice)
			}
		})
	}
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{"s": "s", "a b": "'a b'", "it's": `'it'\''s'`, "x-1.2": "x-1.2"} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %q, want %q", in, got, want)
		}
	}
}
