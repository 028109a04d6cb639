package trustdir

import (
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Shown is p as a message prints it: as it is, or quoted Go-style
// (strconv.Quote) when it holds a character that is not printable (a
// newline, an escape sequence, U+2028) or is not UTF-8. A path is often
// another user's to name, and printed raw such a name could fake a line
// of advice, or a terminal's, in a refusal a person or an agent reads.
// runner/modules.py's shown mirrors it.
func Shown(p string) string {
	if printable(p) {
		return p
	}
	return strconv.Quote(p)
}

// ShownLines joins lines, each printed by Shown, with sep: what a child
// wrote, inside a message, where a raw line could pass for the message's
// own or drive the reader's terminal.
func ShownLines(lines []string, sep string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(Shown(l))
	}
	return b.String()
}

// ShownError is err as a refusal that wraps it prints it: an
// *fs.PathError (what os calls give, which prints its path raw) as its
// operation, its path by Shown and its cause; any other error's text by
// Shown whole (a trustdir refusal's, already so printed, as it is). It
// unwraps to err, so errors.Is and errors.As see what err holds.
func ShownError(err error) error {
	if err == nil {
		return nil
	}
	if pe, ok := err.(*fs.PathError); ok {
		return &shownError{err, pe.Op + " " + Shown(pe.Path) + ": " + Shown(pe.Err.Error())}
	}
	return &shownError{err, Shown(err.Error())}
}

type shownError struct {
	err  error
	text string
}

func (e *shownError) Error() string { return e.text }

func (e *shownError) Unwrap() error { return e.err }

func printable(p string) bool {
	return utf8.ValidString(p) && !strings.ContainsFunc(p, func(r rune) bool { return !strconv.IsPrint(r) })
}

// ShellQuote quotes p as one word for a shell when it needs it: a path
// in a command a refusal advises is often another user's to name. One
// that [Shown] would quote is written $'...' with Go's escapes (bash,
// zsh, ksh, POSIX.1-2024 sh), so the command prints on one line; a shell
// without $'...' (dash 0.5.12) reads another name, which the command then
// fails to find.
func ShellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@") == "" {
		return p
	}
	if !printable(p) {
		q := strconv.Quote(p)
		return "$'" + strings.ReplaceAll(q[1:len(q)-1], "'", `\'`) + "'"
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
