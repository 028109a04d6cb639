package sessions

import (
	"fmt"
	"strings"
	"unicode"
)

// EnvNameError refuses a name given for a variable of the interpreters'
// environment (Request.Env, Config.ExtraEnv) that is surely a mistake. It
// matches ErrBadRequest.
type EnvNameError struct {
	Name string
	Why  string // e.g. "it holds a space"
}

func (e *EnvNameError) Error() string {
	return fmt.Sprintf("%q is not an environment variable name: %s", e.Name, e.Why)
}

func (e *EnvNameError) Unwrap() error { return ErrBadRequest }

// CheckEnvName refuses a variable name that is empty or holds "=", white
// space or a control character (NUL included), with an *EnvNameError.
// No environment can hold the first three kinds ("=" ends the name, NUL
// the entry); a shell cannot name the others, and one given so ("A B=1",
// a name with a pasted newline) is a mistake, though python3's
// os.environ would take it. What POSIX calls a portable name (letters,
// digits, "_") is not required: a dot or a dash ("spring.profiles.active",
// "my-var"), a leading digit or a non-ASCII letter are names env(1),
// execve and python3 pass on, and programs read.
func CheckEnvName(name string) error {
	if name == "" {
		return &EnvNameError{Name: name, Why: "it is empty"}
	}
	if strings.Contains(name, "=") {
		return &EnvNameError{Name: name, Why: `it holds "=", which ends a name`}
	}
	for _, r := range name {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return &EnvNameError{Name: name, Why: "it holds " + runeName(r)}
		}
	}
	return nil
}

// checkEnvNames is CheckEnvName of every name of env, in sorted order, so
// that the same map always gives the same error.
func checkEnvNames(env map[string]string) error {
	var bad *EnvNameError
	for name := range env {
		if err := CheckEnvName(name); err != nil && (bad == nil || name < bad.Name) {
			bad = err.(*EnvNameError)
		}
	}
	if bad == nil {
		return nil
	}
	return bad
}

// runeName names a space or control character as a message says it.
func runeName(r rune) string {
	switch r {
	case ' ':
		return "a space"
	case '\t':
		return "a tab"
	case '\n':
		return "a newline"
	case '\r':
		return "a carriage return"
	case 0:
		return "a NUL"
	}
	if unicode.IsSpace(r) {
		return fmt.Sprintf("white space (%U)", r)
	}
	return fmt.Sprintf("a control character (%U)", r)
}
