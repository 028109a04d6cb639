package percent

import (
	"strings"
	"unicode/utf8"
)

// Python's str methods as jupytext's reading of a script uses them: its
// lines are str.splitlines() of the text, its blank lines and strip() are
// by str.isspace(), whose whitespace is wider than Go's (U+001C-U+001F).

// pyIsSpace is Python's str.isspace() of one character.
func pyIsSpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r == ' ', r >= 0x1c && r <= 0x1f, r == 0x85, r == 0xa0, r == 0x1680,
		r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// pySpace is pyIsSpace as a regexp class body, for \s in jupytext's
// regular expressions (Go's \s has no \v, no U+0085, no U+00A0, ...).
const pySpace = `\t-\r \x1c-\x1f\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyRstrip is Python's str.rstrip().
func pyRstrip(s string) string { return strings.TrimRightFunc(s, pyIsSpace) }

// pyLstrip is Python's str.lstrip().
func pyLstrip(s string) string { return strings.TrimLeftFunc(s, pyIsSpace) }

// pyBlank is jupytext's _BLANK_LINE, ^\s*$.
func pyBlank(line string) bool { return pyStrip(line) == "" }

// pySplitLines is Python's str.splitlines(): lines end at "\n", "\r\n",
// "\r", "\v", "\f", U+001C-U+001E, U+0085, U+2028 and U+2029, and the
// ends are dropped; no line follows a last line end.
func pySplitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		end := size
		switch r {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				end = 2
			}
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		default:
			i += size
			continue
		}
		lines = append(lines, s[start:i])
		i += end
		start = i
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// uncommentPrefix is jupytext's uncomment of one line: the prefix and a
// space, or the prefix alone, removed from its start (not after an
// indent); an empty prefix removes nothing.
func uncommentPrefix(line, prefix string) string {
	if prefix == "" {
		return line
	}
	if rest, ok := strings.CutPrefix(line, prefix+" "); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(line, prefix); ok {
		return rest
	}
	return line
}
