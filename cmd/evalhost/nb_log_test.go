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

// Papermill logs Executing and Ending only for cells it ran: a cell
// cancelled before it started (nb run interrupted between cells) or
// skipped after a failure gets neither line; one stopped while it ran
// gets both.
func TestOutputLogOnlyCellsThatStarted(t *testing.T) {
	started := frames.Frame{Type: frames.TypeStarted}
	type event struct {
		cell   int
		frames []frames.Frame
		status sessions.Status
	}
	tests := []struct {
		name   string
		events []event
		want   []int // the cells (1-based) logged, each with both lines
	}{
		{"cancelled before it started", []event{
			{0, []frames.Frame{started}, sessions.StatusOK},
			{2, nil, sessions.StatusCancelled},
			{3, nil, sessions.StatusCancelled},
		}, []int{1}},
		{"cancelled while it ran", []event{
			{0, []frames.Frame{started}, sessions.StatusCancelled},
			{1, nil, sessions.StatusCancelled},
		}, []int{1}},
		{"skipped after an error", []event{
			{0, []frames.Frame{started, {Type: frames.TypeError, Ename: "E"}}, sessions.StatusError},
			{1, nil, sessions.StatusSkipped},
		}, []int{1}},
		{"every cell ran", []event{
			{0, []frames.Frame{started}, sessions.StatusOK},
			{2, []frames.Frame{started}, sessions.StatusOK},
		}, []int{1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			log := &outputLog{w: &b, last: -1}
			end := log.cellEnd(nil)
			for _, e := range tt.events {
				for _, fr := range e.frames {
					log.frame(e.cell, fr)
				}
				end(e.cell, sessions.CellResult{Status: e.status})
			}
			var want strings.Builder
			for _, n := range tt.want {
				want.WriteString("Executing Cell " + padDashes(n, 40) + "\n")
				want.WriteString("Ending Cell " + padDashes(n, 43) + "\n")
			}
			if got := b.String(); got != want.String() {
				t.Errorf("log:\n%s\nwant:\n%s", got, want.String())
			}
		})
	}
}
