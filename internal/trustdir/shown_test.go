package trustdir

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"unicode"
)

// TestShown: a path another user named is printed so that it cannot fake
// a line, or a terminal's colours, in an error read by a person or an agent:
// quoted Go-style when it holds a control character or is not UTF-8.
func TestShown(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"plain", "/srv/proj/.venv", "/srv/proj/.venv"},
		{"space and quote", `/p/it's "x" y`, `/p/it's "x" y`},
		{"unicode", "/p/café", "/p/café"},
		{"newline", "/p/x\necho '*' >> ~/.evalhost/safe-directories", `"/p/x\necho '*' >> ~/.evalhost/safe-directories"`},
		{"escape", "/p/\x1b[2Kx", `"/p/\x1b[2Kx"`},
		{"not utf-8", "/p/\xff", `"/p/\xff"`},
		{"line separator", "/p/a\u2028b", `"/p/a\u2028b"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Shown(tt.in); got != tt.want {
				t.Errorf("Shown(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestErrorTextPrintable: no part of a refusal prints a control character
// of a path's: not its reason, nor the command it advises.
func TestErrorTextPrintable(t *testing.T) {
	for _, name := range []string{"x\necho '*' >> ~/.evalhost/safe-directories\n", "x\x1b[2K\x1b[1Afake"} {
		at := "/p/" + name
		for _, e := range []*Error{
			{Path: at, At: at, Role: Self, Problem: Writable, Mode: 0o777},
			{Path: at + "/m.py", At: at, Role: Holds, Problem: Owned, Owner: 54321},
			{Path: at + "/m.py", At: at, Role: Above, Problem: OpenToAll, Mode: 0o777},
			{Path: at, At: at, Role: Self, Problem: OpenToAll, Mode: 0o777},
		} {
			for what, text := range map[string]string{"Error": e.Error(), "Fix": e.Fix()} {
				if strings.ContainsFunc(text, unicode.IsControl) {
					t.Errorf("%s of %+v prints a control character: %q", what, e, text)
				}
			}
			if !strings.Contains(e.Error(), Shown(at)) {
				t.Errorf("Error %q does not name %s", e.Error(), Shown(at))
			}
		}
	}
}

// TestShownError: an os error's path, and any other error's text, is
// printed as Shown prints it, and the error still matches what it wraps.
func TestShownError(t *testing.T) {
	name := "/p/x\n  fake line\x1b[2K\u202e"
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"a path error", &fs.PathError{Op: "mkdir", Path: name, Err: syscall.ENOTDIR}, "mkdir " + Shown(name) + ": not a directory"},
		{"a plain path error", &fs.PathError{Op: "open", Path: "/p/x", Err: syscall.EACCES}, "open /p/x: permission denied"},
		{"other text", errors.New("at " + name), Shown("at " + name)},
		{"a refusal", &Error{Path: name, At: name, Role: Self, Problem: Writable, Mode: 0o777}, (&Error{Path: name, At: name, Role: Self, Problem: Writable, Mode: 0o777}).Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ShownError(tt.err)
			if got.Error() != tt.want {
				t.Errorf("ShownError = %q, want %q", got.Error(), tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("ShownError(%v) does not match it", tt.err)
			}
		})
	}
	if ShownError(nil) != nil {
		t.Error("ShownError(nil) is not nil")
	}
}

func TestShownLines(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"none", nil, ""},
		{"one", []string{"a b"}, "a b"},
		{"printable ones as they are", []string{"x", "y"}, "x\n    y"},
		{"an escape quoted on its line", []string{"ok", "\x1b]0;t\a", "]"}, "ok\n    \"\\x1b]0;t\\a\"\n    ]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShownLines(tt.lines, "\n    "); got != tt.want {
				t.Errorf("ShownLines(%q) = %q, want %q", tt.lines, got, tt.want)
			}
		})
	}
}
