package runner

import (
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// Every frame that has a place among the cell's text is preceded by one
// position mark on each output pipe, and no other frame is.
func TestPositionMarks(t *testing.T) {
	p := start(t, startOpts{})
	tests := []struct {
		name string
		code string
	}{
		{"text only", "print('a')"},
		{"display between prints", "print('a')\ndisplay(1)\nprint('b')\ndisplay(2)"},
		{"result", "print('a')\n40 + 2"},
		{"error", "print('a')\n1/0"},
		{"input", "input('x? ')"},
		{"update and clear", "h = display('x', display_id=True)\nh.update('y')\nfrom IPython.display import clear_output\nclear_output()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.run(tt.code)
			want := 0
			for _, f := range r.frames {
				switch f.Type {
				case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeClearOutput,
					frames.TypeResult, frames.TypeError, frames.TypeInput:
					want++
				}
			}
			if r.positions != want {
				t.Fatalf("%d position marks for %d positioned frames: %+v", r.positions, want, r.frames)
			}
		})
	}
}
