package main

import (
	"strings"
	"unicode"
)

// sizeSet says whether shutil.get_terminal_size takes v, a COLUMNS or
// LINES value, as the size: python3's int(v) reads it (white space around
// it, a sign, digits of any script, single underscores between them) as
// a number above 0. Otherwise it asks the terminal.
func sizeSet(v string) bool {
	v = strings.TrimFunc(v, unicode.IsSpace)
	neg := strings.HasPrefix(v, "-")
	if neg || strings.HasPrefix(v, "+") {
		v = v[1:]
	}
	nonzero, prevDigit := false, false
	for i, r := range v {
		switch {
		case r == '_' && prevDigit && i+1 < len(v):
			prevDigit = false
		case unicode.IsDigit(r):
			prevDigit = true
			nonzero = nonzero || digitValue(r) != 0
		default:
			return false
		}
	}
	return prevDigit && nonzero && !neg
}

// digitValue is a decimal digit's value: Unicode puts each script's digits
// in runs of ten from zero, runs that may follow one another.
func digitValue(r rune) int {
	start := r
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(r-start) % 10
}
