package sessions

import (
	"errors"
	"strings"
	"testing"
)

// A variable name no shell could name, given for the interpreters'
// environment, is a mistake: refused with what is wrong with it, whether
// it comes in a request (serve's "env", run --session's --env) or in the
// registry's configuration (one-shot run's --env). Names python3 and
// env(1) pass on, though not POSIX's portable ones, stay allowed.
func TestEnvNames(t *testing.T) {
	cases := []struct {
		name string
		env  string
		want string // "" for allowed
	}{
		{"portable", "MY_VAR1", ""},
		{"lower case", "http_proxy", ""},
		{"a dot and a dash", "spring.profiles-active", ""},
		{"a leading digit", "1X", ""},
		{"a non-ASCII letter", "ÄPFEL", ""},
		{"empty", "", `"" is not an environment variable name: it is empty`},
		{"an equals sign", "A=B", `"A=B" is not an environment variable name: it holds "="`},
		{"a space", "A B", `"A B" is not an environment variable name: it holds a space`},
		{"a leading space", " A", "it holds a space"},
		{"a tab", "A\tB", "it holds a tab"},
		{"a newline", "A\n", "it holds a newline"},
		{"a NUL", "A\x00B", "it holds a NUL"},
		{"an escape", "A\x1b[2K", "it holds a control character (U+001B)"},
		{"a no-break space", "A\u00a0B", "it holds white space (U+00A0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				if c.want == "" {
					if err != nil {
						t.Fatalf("%s: %v; want it allowed", what, err)
					}
					return
				}
				var ne *EnvNameError
				if !errors.As(err, &ne) || !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: %v; want an *EnvNameError (ErrBadRequest) saying %q", what, err, c.want)
				}
			}
			check("CheckEnvName", CheckEnvName(c.env))
			if c.want == "" {
				return // allowed names are run by the rows' callers, not here
			}
			env := map[string]string{"OK": "1", c.env: "1"}
			queue := func(cfg Config, req Request) error {
				r := New(cfg)
				defer r.Close()
				_, err := r.Queue(req)
				return err
			}
			check("a request's env", queue(Config{Home: t.TempDir()}, Request{Cwd: t.TempDir(), Env: env, Cells: []Cell{py("1")}}))
			check("Config.ExtraEnv", queue(Config{Home: t.TempDir(), ExtraEnv: env}, Request{Cwd: t.TempDir(), Cells: []Cell{py("1")}}))
		})
	}
}
