package nbrun

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/notebook"
)

// TestSelectCodeCells: which cells a notebook run executes. Blank code cells are
// skipped as nbclient skips them, so execution counts match Jupyter's.
func TestSelectCodeCells(t *testing.T) {
	nb := notebook.New()
	for i, c := range []struct {
		t   notebook.CellType
		src string
	}{{notebook.Code, "1"}, {notebook.Markdown, "md"}, {notebook.Code, ""}, {notebook.Code, "  \n\t"}, {notebook.Code, "# only a comment"}, {notebook.Code, "2"},
		// Blank as Python's str.strip() (nbclient's test) sees it, which
		// takes \x1c-\x1f for whitespace; a zero-width space is no space.
		{notebook.Code, "\x1c\x1d\x1e\x1f\u0085\u00a0\u2028\u3000"}, {notebook.Code, "\u200b"}} {
		if err := nb.Insert(i, c.t, c.src); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		spec    string
		want    []int
		wantErr string
	}{
		{"all code cells but the blank ones", "", []int{0, 4, 5, 7}, ""},
		{"a selected blank cell is skipped", "2-5", []int{4, 5}, ""},
		{"only blank cells selected", "2,3", nil, ""},
		{"markdown selected", "1", nil, "cell 1 is a markdown cell"},
		// nb view numbers every cell, so a range of its numbers spans prose:
		// it picks its code cells, as it passes over its blank ones.
		{"a range passes over markdown", "0-5", []int{0, 4, 5}, ""},
		{"a range from markdown", "1-4", []int{4}, ""},
		{"out of range", "9", nil, "the notebook has cells 0..7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SelectCodeCells(nb, tt.spec)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrCellSpec) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("SelectCodeCells(%q) = %v, %v; want %v", tt.spec, got, err, tt.want)
			}
		})
	}
}

// A notebook's kernel language is the notebook's to say, often someone
// else's: the refusal shows it quoted when it holds a control character.
func TestLanguageErrorShowsTheLanguage(t *testing.T) {
	for _, tc := range []struct{ lang, shown string }{
		{"R", "its kernel language is R ("},
		{"r\x1b]0;x\x07\nevalhost: fine", `its kernel language is "r\x1b]0;x\a\nevalhost: fine" (`},
	} {
		msg := (&LanguageError{Language: tc.lang}).Error()
		if !strings.Contains(msg, tc.shown) || strings.ContainsAny(msg, "\x1b\x07\n") {
			t.Errorf("%q; want it to say %q, no control character raw", msg, tc.shown)
		}
	}
}
