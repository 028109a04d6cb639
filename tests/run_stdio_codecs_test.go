package tests

import (
	"fmt"
	"os/exec"
	"testing"
)

// stdioCodecCode are the cells the stdio codec rows run: text a strict
// codec refuses (a lone surrogate; one surrogateescape writes as its byte;
// a non-ASCII letter), on stdout and on stderr, and the codecs themselves.
var stdioCodecCode = []struct{ name, code string }{
	{"a lone surrogate", `print('x\ud800y')`},
	{"an escapable surrogate", `print('x\udcffy')`},
	{"a non-ASCII letter", `print('caf\xe9')`},
	{"a lone surrogate on stderr", `import sys; print('x\ud800y', file=sys.stderr)`},
	{"a lone surrogate in a traceback", `raise ValueError('x\ud800y')`},
	{"the codecs", `import sys; print(sys.stdout.encoding, sys.stdout.errors, sys.stderr.encoding, sys.stderr.errors)`},
}

// stdioCodecEnvs are the environments python3 chooses its stdio codecs by:
// the locale (a UTF-8 one is strict; C and POSIX take UTF-8 mode's
// surrogateescape), PYTHONIOENCODING, PYTHONUTF8.
func stdioCodecEnvs(t *testing.T) []struct {
	name string
	env  []string
} {
	strict := strictUTF8Locale(t)
	return []struct {
		name string
		env  []string
	}{
		{"the test's environment", nil},
		{"a UTF-8 locale", []string{"LC_ALL=" + strict}},
		{"LC_ALL=C", []string{"LC_ALL=C"}},
		{"LC_ALL=POSIX", []string{"LC_ALL=POSIX"}},
		{"PYTHONUTF8=1 in a UTF-8 locale", []string{"LC_ALL=" + strict, "PYTHONUTF8=1"}},
		{"PYTHONIOENCODING=utf-8:replace", []string{"PYTHONIOENCODING=utf-8:replace"}},
		{"PYTHONIOENCODING=utf-8:strict", []string{"PYTHONIOENCODING=utf-8:strict"}},
		{"PYTHONIOENCODING=latin-1", []string{"PYTHONIOENCODING=latin-1"}},
		{"PYTHONIOENCODING=ascii", []string{"PYTHONIOENCODING=ascii", "LC_ALL=C"}},
	}
}

// strictUTF8Locale is a UTF-8 locale this machine has under which python3
// takes stdout's errors as strict (not C.UTF-8, which python3 treats as C);
// without one the row runs under en_US.UTF-8 anyway, as python3 falls back.
func strictUTF8Locale(t *testing.T) string {
	t.Helper()
	for _, l := range []string{"en_US.UTF-8", "C.UTF-8"} {
		cmd := exec.Command("python3", "-c", "import sys; print(sys.stdout.errors)")
		cmd.Env = append(cmd.Environ(), "LC_ALL="+l, "PYTHONIOENCODING=", "PYTHONUTF8=")
		if out, err := cmd.Output(); err == nil && string(out) == "strict\n" {
			return l
		}
	}
	t.Log("no UTF-8 locale here makes python3's stdout strict: that row's parity is UTF-8 mode's")
	return "en_US.UTF-8"
}

// A script's sys.stdout and sys.stderr encode as python3's would in its
// environment: a character the codec refuses is python3's
// UnicodeEncodeError (a traceback, exit 1), surrogateescape's byte, or
// PYTHONIOENCODING's codec and handler; stderr backslashreplaces, as
// python3's always does. Not the runner's backslashreplace for agents.
func TestRunStdioCodecsAsPython(t *testing.T) {
	for _, e := range stdioCodecEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			for _, c := range stdioCodecCode {
				t.Run(c.name, func(t *testing.T) {
					sameAsPythonIn(t, "", e.env, []string{"-c", c.code}, []string{"-c", c.code})
				})
			}
		})
	}
	strict := []string{"LC_ALL=" + strictUTF8Locale(t)}
	cells := writeScript(t, t.TempDir(), "cells.py", "print('first')\n# %%\nprint('x\\ud800y')\n# %%\nprint('not run')\n")
	for _, c := range []struct {
		name    string
		env     []string
		run, py []string
	}{
		{"-X utf8", strict, []string{"-X", "utf8", "-c", `print('x\udcffy')`}, nil},
		{"-E ignores PYTHONIOENCODING", []string{"PYTHONIOENCODING=ascii"}, []string{"-E", "-c", `print('caf\xe9')`}, nil},
		{"-I ignores PYTHONIOENCODING", []string{"PYTHONIOENCODING=utf-8:strict"}, []string{"-I", "-c", `print('x\udcffy')`}, nil},
		// The script's own reconfigure lasts into its later cells.
		{"a cell's reconfigure lasts", strict,
			[]string{"-c", "import sys; sys.stdout.reconfigure(errors='replace')", "-c", `print('x\ud800y')`},
			[]string{"-c", "import sys; sys.stdout.reconfigure(errors='replace')\n" + `print('x\ud800y')`}},
		{"a later cell's error", strict, []string{cells}, nil},
		{"at exit", strict, []string{"-c", `import atexit; atexit.register(print, 'x\ud800y'); print('ran')`}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			py := c.py
			if py == nil {
				py = c.run
			}
			sameAsPythonIn(t, "", c.env, c.run, py)
		})
	}
}

// run --session's script runs as a one-shot run's: its codecs are
// python3's in the environment that started the session's interpreter.
func TestRunSessionStdioCodecsAsPython(t *testing.T) {
	h := newDaemonHome(t)
	n := 0
	for _, e := range stdioCodecEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			for _, c := range stdioCodecCode {
				t.Run(c.name, func(t *testing.T) {
					n++
					cmd := h.cmd("run", "--session", fmt.Sprintf("codecs-%d", n), "-c", c.code)
					cmd.Env = append(cmd.Env, e.env...)
					py := pythonCmd(t, "-c", c.code)
					py.Env = append(py.Environ(), e.env...)
					sameAsPythonCmd(t, cmd, py)
				})
			}
		})
	}
}
