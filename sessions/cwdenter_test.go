package sessions

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestEnterCwd: a request with EnterCwd starts each language's cells in
// the session's cwd, whatever a cell of an earlier request did; a cell's
// change lasts to the request's end. Without it a change lasts (Jupyter's
// way).
func TestEnterCwd(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	const where = "import os; print(os.getcwd())"
	for _, tc := range []struct {
		name   string
		enter  bool
		cells  []Cell
		stdout string
	}{
		{"a cell moves", true, []Cell{py("import os; os.chdir('sub')"), py(where), sh("cd sub; pwd")}, sub + "\n" + sub + "\n"},
		{"entered again", true, []Cell{py(where), sh("pwd")}, dir + "\n" + dir + "\n"},
		{"moved, not entered", false, []Cell{py("import os; os.chdir('sub')"), sh("cd sub")}, ""},
		{"left where it moved", false, []Cell{py(where), sh("pwd")}, sub + "\n" + sub + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, c := eval(t, r, Request{Session: "s", Cwd: dir, EnterCwd: tc.enter, Cells: tc.cells})
			if out := c.Text(frames.TypeStdout); res.Status != StatusOK || out != tc.stdout {
				t.Fatalf("status %s, stdout %q, stderr %q; want %q", res.Status, out, c.Text(frames.TypeStderr), tc.stdout)
			}
		})
	}
}

// TestMovedCwdKeepsSession: a request from the new path of a session's
// renamed cwd reaches that session, its state kept, and its interpreter
// is sent the new path (os.getcwd() and the cwd's sys.path entry name
// it), without EnterCwd too; the old path is no session any more.
func TestMovedCwdKeepsSession(t *testing.T) {
	r := newTestRegistry(t, Config{})
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, e := filepath.Join(base, "d"), filepath.Join(base, "e")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if res, c := eval(t, r, Request{Session: "s", Cwd: d, Cells: []Cell{py("x = 1"), sh("y=2")}}); res.Status != StatusOK {
		t.Fatalf("status %s, output %q", res.Status, c.Output())
	}
	if err := os.Rename(d, e); err != nil {
		t.Fatal(err)
	}
	show := "import os, sys; print(x, os.getcwd(), " + "'" + e + "' in sys.path, '" + d + "' in sys.path)"
	res, c := eval(t, r, Request{Session: "s", Cwd: e, Cells: []Cell{py(show), sh("echo $y $(pwd)")}})
	if want := "1 " + e + " True False\n2 " + e + "\n"; res.Status != StatusOK || c.Text(frames.TypeStdout) != want {
		t.Fatalf("status %s, stdout %q, stderr %q; want %q", res.Status, c.Text(frames.TypeStdout), c.Text(frames.TypeStderr), want)
	}
	if list := r.Sessions(); len(list) != 1 || list[0].Cwd != e {
		t.Fatalf("sessions %+v, want s in %s alone", list, e)
	}
}
