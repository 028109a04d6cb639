package sessions

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A request's Terminal reaches each of its Python cells, and none of the
// next request's (one session: run --session at a terminal, then piped);
// the request's Env wins over its variables; sh cells are not told.
func TestRequestTerminal(t *testing.T) {
	r := newTestRegistry(t, Config{Environ: []string{"PATH=/usr/bin:/bin"}})
	dir := t.TempDir()
	const show = "import sys, os\nprint(sys.stdout.isatty(), sys.stderr.isatty(), os.environ.get('COLUMNS'), os.environ.get('FORCE_COLOR'))"
	hundred, one := "100", "1"
	term := &frames.Terminal{Fds: []int{1, 2}, Env: map[string]*string{"COLUMNS": &hundred, "FORCE_COLOR": &one}}
	for _, tc := range []struct {
		name     string
		terminal *frames.Terminal
		env      map[string]string
		cells    []Cell
		stdout   string
	}{
		{"every Python cell of the request", term, nil, []Cell{py(show), py(show)}, "True True 100 1\nTrue True 100 1\n"},
		{"none of the next request's", nil, nil, []Cell{py(show)}, "False False None None\n"},
		{"stderr alone", &frames.Terminal{Fds: []int{2}}, nil, []Cell{py(show)}, "False True None None\n"},
		{"Env wins", term, map[string]string{"COLUMNS": "70"}, []Cell{py(show)}, "True True 70 1\n"},
		{"Env lasts, as ever", nil, nil, []Cell{py(show)}, "False False 70 None\n"},
		{"sh cells are not told", term, nil, []Cell{sh("echo ${FORCE_COLOR-unset}")}, "unset\n"},
		// The request's cells are one script: a cell's change lasts into
		// the later ones, as in python3 at a terminal; the next request
		// gets the terminal's value again.
		{"a cell's change lasts to the request's end", term, nil,
			[]Cell{py("import os; os.environ['COLUMNS'] = '7'; del os.environ['FORCE_COLOR']"), sh("true"), py(show)}, "True True 7 None\n"},
		{"the next request has the terminal's", term, nil, []Cell{py(show)}, "True True 100 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, c := eval(t, r, Request{Session: "s", Cwd: dir, Terminal: tc.terminal, Env: tc.env, Cells: tc.cells})
			if out := c.Text(frames.TypeStdout); res.Status != StatusOK || out != tc.stdout {
				t.Fatalf("status %s, stdout %q, stderr %q; want %q", res.Status, out, c.Text(frames.TypeStderr), tc.stdout)
			}
		})
	}
	if term.Env["COLUMNS"] != &hundred {
		t.Errorf("the caller's Terminal was changed: %v", term.Env)
	}
}

// A Terminal refused names what is wrong with it, the same way every time:
// of several names not allowed, the first in sorted order, as Env's.
func TestRequestTerminalRefused(t *testing.T) {
	r := newTestRegistry(t, Config{})
	v := "1"
	for _, tc := range []struct {
		name     string
		terminal *frames.Terminal
		says     string
	}{
		{"fd 0", &frames.Terminal{Fds: []int{0}}, "fd 0 is not 1"},
		{"fd 3", &frames.Terminal{Fds: []int{1, 3}}, "fd 3 is not 1"},
		{"another variable", &frames.Terminal{Fds: []int{1}, Env: map[string]*string{"PATH": &v}}, `"PATH" is not one of`},
		{"several others", &frames.Terminal{Fds: []int{1}, Env: map[string]*string{"PYTHONPATH": &v, "LD_PRELOAD": &v, "COLUMNS": &v,
			"PATH": &v, "HOME": &v, "BASH_ENV": &v}}, `"BASH_ENV" is not one of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // a map's order differs from one range to the next
				_, err := r.Eval(context.Background(), Request{Session: "s", Terminal: tc.terminal, Cells: []Cell{py("1")}}, func(int, frames.Frame) {})
				if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("Eval: %v, want ErrBadRequest saying %q", err, tc.says)
				}
			}
		})
	}
}
