package runner

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pathDirs are the directories TestRequestArgvSysPath names: the runner's
// start cwd, another cwd, a script's directory, PYTHONPATH's.
type pathDirs struct{ cwd, cwd2, dir, pp string }

func newPathDirs(t *testing.T) pathDirs {
	var d pathDirs
	for _, p := range []*string{&d.cwd, &d.cwd2, &d.dir, &d.pp} {
		real, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		*p = real
	}
	return d
}

// look is a cell that shows sys.path reduced to the entries the rule
// moves, named: "" and d's directories.
func (d pathDirs) look() string {
	return "import sys\n[('' if p == '' else {" + strconv.Quote(d.cwd) + ": 'cwd', " + strconv.Quote(d.cwd2) + ": 'cwd2', " +
		strconv.Quote(d.dir) + ": 'dir', " + strconv.Quote(d.pp) + ": 'pp'}.get(p)) for p in sys.path if p == '' or p in (" +
		strconv.Quote(d.cwd) + ", " + strconv.Quote(d.cwd2) + ", " + strconv.Quote(d.dir) + ", " + strconv.Quote(d.pp) + ")]"
}

type pathRow struct {
	name string
	req  map[string]any // its code is look's when it has none
	want string
}

// runPathRows runs rows in order on one runner: each row's sys.path
// follows the rows before it, as the runs of one --session do.
func runPathRows(t *testing.T, p *proc, d pathDirs, rows []pathRow) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			req := map[string]any{"code": d.look()}
			for k, v := range r.req {
				req[k] = v
			}
			if code, ok := req["code"].(string); ok && !strings.Contains(code, "sys.path if") {
				req["code"] = code + "\n" + d.look()
			}
			c := p.runReq(req)
			wantOK(t, c)
			wantResult(r.want)(t, c)
		})
	}
}

// A request's argv gives sys.path python3's for that command line: a
// FILE's directory first and neither the cwd nor "" (the notebook's
// entries the runner put there), "" first for -c and -, the cwd's full
// path for -m; PYTHONPATH's and a cell's own entries stay. Each argv
// takes back what the one before set; a request without argv keeps what
// the last one left, as it keeps sys.argv.
func TestRequestArgvSysPath(t *testing.T) {
	var d pathDirs
	inBothModesWith(t, func(t *testing.T) startOpts {
		d = newPathDirs(t)
		return startOpts{dir: d.cwd, env: []string{"PYTHONPATH=" + d.pp}}
	}, func(t *testing.T, p *proc) {
		script, inCwd := filepath.Join(d.dir, "s.py"), filepath.Join(d.cwd, "s.py")
		runPathRows(t, p, d, []pathRow{
			{"a fresh runner: the notebook's cwd first, '' before site-packages", nil, `['cwd', 'pp', '']`},
			{"FILE: its directory, no cwd, no ''", map[string]any{"argv": []string{"s.py"}, "file": script}, `['dir', 'pp']`},
			{"a request without argv keeps it", nil, `['dir', 'pp']`},
			{"-c: '' first, the FILE's directory gone", map[string]any{"argv": []string{"-c"}}, `['', 'pp']`},
			{"then a request without argv keeps -c's", nil, `['', 'pp']`},
			{"-", map[string]any{"argv": []string{"-"}, "file": "<stdin>"}, `['', 'pp']`},
			{"-m: the cwd's full path", map[string]any{"argv": []string{"-m"}}, `['cwd', 'pp']`},
			{"a FILE in the cwd: its directory once", map[string]any{"argv": []string{"s.py"}, "file": inCwd}, `['cwd', 'pp']`},
			{"a cwd under a script's sys.path: the chdir only", map[string]any{"cwd": d.cwd2}, `['cwd', 'pp']`},
			{"-c after it", map[string]any{"argv": []string{"-c"}}, `['', 'pp']`},
			{"a cell's own entry stays", map[string]any{"code": "sys.path.insert(1, " + strconv.Quote(d.dir) + ")"}, `['', 'dir', 'pp']`},
			{"and through the next argv", map[string]any{"argv": []string{"-m"}}, `['cwd2', 'dir', 'pp']`},
		})
	})
}

// The first request of a session's fresh runner brings its cwd and argv
// together; PYTHONPATH naming the cwd keeps its entry, as python3's.
func TestRequestArgvSysPathFresh(t *testing.T) {
	d := newPathDirs(t)
	script := filepath.Join(d.dir, "s.py")
	t.Run("cwd and argv at once", func(t *testing.T) {
		p := start(t, startOpts{dir: d.cwd, env: []string{"PYTHONPATH=" + d.pp}})
		runPathRows(t, p, d, []pathRow{
			{"-c in another cwd", map[string]any{"cwd": d.cwd2, "argv": []string{"-c"}}, `['', 'pp']`},
			{"FILE", map[string]any{"argv": []string{"s.py"}, "file": script}, `['dir', 'pp']`},
			{"-m: the new cwd", map[string]any{"argv": []string{"-m"}}, `['cwd2', 'pp']`},
		})
	})
	t.Run("PYTHONPATH naming the cwd", func(t *testing.T) {
		p := start(t, startOpts{dir: d.cwd, env: []string{"PYTHONPATH=" + d.cwd}})
		runPathRows(t, p, d, []pathRow{
			{"the notebook's and PYTHONPATH's", nil, `['cwd', 'cwd', '']`},
			{"FILE: PYTHONPATH's stays", map[string]any{"argv": []string{"s.py"}, "file": script}, `['dir', 'cwd']`},
		})
	})
}
