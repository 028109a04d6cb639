package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestNumberFlagsRefusedInWords: a numeric flag given what it cannot
// take says what it wants, not strconv's or time's words, in every
// command (they share parseFlags).
func TestNumberFlagsRefusedInWords(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a fraction", []string{"run", "--timeout", "1.5", "-c", "1"}, `"--timeout" flag: want a whole number, without a fraction or exponent`},
		{"an exponent", []string{"serve", "--max-output", "1e5"}, `"--max-output" flag: want a whole number, without a fraction or exponent`},
		{"a word", []string{"mcp", "--max-sessions", "four"}, `"--max-sessions" flag: want a whole number`},
		{"too large", []string{"nb", "run", "--timeout", "99999999999999999999", "x.ipynb"}, `"--timeout" flag: want a whole number, and a smaller one`},
		{"an int64", []string{"jobs", "--offset", "x", "job-1"}, `"--offset" flag: want a whole number`},
		{"a duration without a unit", []string{"run", "--grace", "2", "-c", "1"}, `"--grace" flag: want a duration such as 500ms, 2s or 1m30s`},
		{"a duration's unknown unit", []string{"serve", "--idle-timeout", "5x"}, `"--idle-timeout" flag: want a duration such as 500ms, 2s or 1m30s`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := dispatch(tt.args, strings.NewReader(""), &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitUsage, stderr.String())
			}
			if got := stderr.String(); !strings.Contains(got, tt.want) || strings.Contains(got, "strconv") || strings.Contains(got, "time:") {
				t.Fatalf("stderr %q, want it to say %q in words", got, tt.want)
			}
		})
	}
}
