package sessions

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Config.PythonArgs reach the runner's interpreter as python3's options:
// its sys.flags, warnoptions and -X options say so.
func TestPythonArgsReachTheInterpreter(t *testing.T) {
	look := py("import sys; print(sys.flags.optimize, sys.flags.no_user_site, sys.flags.bytes_warning, sys.warnoptions, sys._xoptions)")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"none", nil, "0 0 0 [] {}\n"},
		{"each alone", []string{"-O", "-s", "-b", "-W", "error", "-X", "utf8"}, "1 1 1 ['error', 'default::BytesWarning'] {'utf8': True}\n"},
		{"combined and attached", []string{"-OOsbb", "-Werror", "-Wignore::UserWarning", "-Xutf8"}, "2 1 2 ['error', 'ignore::UserWarning', 'error::BytesWarning'] {'utf8': True}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{PythonArgs: tt.args})
			res, c := eval(t, r, Request{Session: "args", Cwd: t.TempDir(), Cells: []Cell{look}})
			if res.Status != StatusOK || c.Output() != tt.want {
				t.Fatalf("status %s, output %q; want ok and %q", res.Status, c.Output(), tt.want)
			}
		})
	}
}

// What is not an interpreter option evalhost passes is refused, every
// request: a Go program cannot run code (-c), a module (-m) or skip the
// runner's first line (-x) through Config.PythonArgs, nor leave a -W
// without its value, which would take runner.py's place.
func TestPythonArgsRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"code", []string{"-c", "print(1)"}, `"-c": -c is not one evalhost passes`},
		{"code after flags", []string{"-uc", "print(1)"}, `"-uc": -c is not one evalhost passes`},
		{"module", []string{"-m", "http.server"}, `"-m": -m is not one`},
		{"skip the first line", []string{"-x"}, `"-x": -x is not one`},
		{"interactive", []string{"-i"}, `"-i": -i is not one`},
		{"a long option", []string{"--check-hash-based-pycs", "never"}, "not an interpreter option"},
		{"a script", []string{"evil.py"}, `"evil.py": not an interpreter option`},
		{"-W without its value", []string{"-W"}, `"-W": -W needs a value`},
		{"-X with an empty value", []string{"-X", ""}, `"-X": -X needs a value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{PythonArgs: tt.args})
			_, err := r.Eval(context.Background(), Request{Session: "args", Cwd: t.TempDir(), Cells: []Cell{py("1")}}, nil)
			var pe *PythonArgsError
			if !errors.As(err, &pe) || !errors.Is(err, ErrBadRequest) || !errors.Is(err, ErrPythonArgs) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Eval: %v; want a *PythonArgsError saying %q", err, tt.want)
			}
		})
	}
}

// A gateway kernel's command line is its kernelspec's: its starter
// refuses interpreter options before it starts anything.
func TestGatewayStarterRefusesPythonArgs(t *testing.T) {
	start := GatewayStarter(GatewayConfig{URL: "http://127.0.0.1:1"})
	_, err := start(context.Background(), Spec{Language: LangPython, PythonArgs: []string{"-u"}})
	if !errors.Is(err, ErrPythonArgs) {
		t.Fatalf("start: %v; want ErrPythonArgs", err)
	}
}
