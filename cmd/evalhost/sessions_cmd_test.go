package main

import "testing"

// A sessions table cell reads as one value: text that is blank, holds
// white space or is not printable is quoted.
func TestTableCell(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "s1", "s1"},
		{"a path", "/home/u/proj", "/home/u/proj"},
		{"blank", " ", `" "`},
		{"empty", "", `""`},
		{"a space inside", "a b", `"a b"`},
		{"a path with a space", "/home/u/my proj", `"/home/u/my proj"`},
		{"a tab", "a\tb", `"a\tb"`},
		{"an escape", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"unicode", "café", "café"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tableCell(tc.in); got != tc.want {
				t.Errorf("tableCell(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}
