package main

import (
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// The log goes to a terminal: escape sequences the notebook keeps (nb run
// records output verbatim) are removed from it, also when one is split
// across two chunks, and the cell's end lets out what a chunk held back.
func TestOutputLogIsSanitised(t *testing.T) {
	tests := []struct {
		name   string
		frames []frames.Frame
		want   string // the log between the cell's Executing and Ending lines
	}{
		{"colours", []frames.Frame{{Type: frames.TypeStdout, Data: "\x1b[31mred\x1b[0m\n"}}, "red\n\n"},
		{"a sequence split across chunks", []frames.Frame{
			{Type: frames.TypeStdout, Data: "a\x1b[3"}, {Type: frames.TypeStdout, Data: "1mb\n"}}, "a\nb\n\n"},
		{"a title and a bell on stderr", []frames.Frame{{Type: frames.TypeStderr, Data: "\x1b]0;pwned\x07x\x07\n"}}, "x\n\n"},
		{"a rune split across chunks", []frames.Frame{
			{Type: frames.TypeStdout, Data: "caf\xc3"}, {Type: frames.TypeStdout, Data: "\xa9\n"}}, "caf\né\n\n"},
		{"a result's text", []frames.Frame{{Type: frames.TypeResult, Bundle: textBundle("\x1b[1m42\x1b[0m")}}, "42\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			log := &outputLog{w: &b, last: -1}
			for _, fr := range tt.frames {
				log.frame(0, fr)
			}
			log.cellEnd(nil)(0, sessions.CellResult{Status: sessions.StatusOK})
			got := b.String()
			got = strings.TrimPrefix(got, "Executing Cell 1---------------------------------------\n")
			got = strings.TrimSuffix(got, "Ending Cell 1------------------------------------------\n")
			if got != tt.want {
				t.Errorf("log %q, want %q (all: %q)", got, tt.want, b.String())
			}
		})
	}
}

func textBundle(text string) frames.Bundle {
	b := frames.Bundle{}
	b.SetText("text/plain", text)
	return b
}
