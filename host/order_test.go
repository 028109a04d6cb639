package host

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// Text printed before a display must be emitted before it: the runner
// writes it to fd 1 first, but fd 1 and fd 3 are separate pipes.
func TestTextAndDisplayKeepOrder(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	const n = 200
	r := execute(t, p, context.Background(), fmt.Sprintf("for i in range(%d):\n    print(i)\n    display(i)", n))
	if r.err != nil || r.done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	var got []string
	for _, f := range r.frames {
		switch f.Type {
		case frames.TypeStdout:
			got = append(got, strings.Fields(f.Data)...)
		case frames.TypeDisplay:
			s, _ := f.Bundle.Text("text/plain")
			got = append(got, "D"+s)
		}
	}
	// The weak order first: a display never comes before the text printed
	// before it; then, with the runner's position marks, the exact order.
	at := map[string]int{}
	for i, s := range got {
		at[s] = i
	}
	for i := range n {
		text, disp := fmt.Sprint(i), fmt.Sprintf("D%d", i)
		if _, ok := at[disp]; !ok || at[text] > at[disp] {
			t.Fatalf("%s missing or before %s: %q", disp, text, got)
		}
	}
	if p.posMarks.Load() == 0 {
		t.Fatal("the runner wrote no position marks, so exact order cannot hold")
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprint(i), fmt.Sprintf("D%d", i))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("order differs at item %d: got %q, want %q (%d items, want %d)", i, got[max(0, i-3):min(len(got), i+4)], want[max(0, i-3):min(len(want), i+4)], len(got), len(want))
			}
		}
		t.Fatalf("got %d items, want %d", len(got), len(want))
	}
}

// A display streams when it is made, not at the end of the cell, whether
// or not the runner writes position marks.
func TestDisplayStreamsBeforeLaterText(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	r := execute(t, p, context.Background(), "import os, time\ndisplay('first')\ntime.sleep(0.3)\nos.write(1, b'later\\n')")
	if r.err != nil || r.done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	var got []string
	for _, f := range r.frames {
		switch f.Type {
		case frames.TypeStdout:
			got = append(got, strings.TrimSpace(f.Data))
		case frames.TypeDisplay:
			got = append(got, "display")
		}
	}
	if strings.Join(got, " ") != "display later" {
		t.Fatalf("order = %q, want the display before the later text", got)
	}
}

// Lines written alternately to sys.stdout and sys.stderr come out in the
// order written, though they travel on two pipes: the runner syncs the
// streams whenever its writes switch between them.
func TestStdoutStderrKeepOrder(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	const n = 200
	r := execute(t, p, context.Background(), fmt.Sprintf(
		"import sys\nfor i in range(%d):\n    print('o', i)\n    print('e', i, file=sys.stderr)\n    if i %% 7 == 0: display(i)", n))
	if r.err != nil || r.done.Status != frames.StatusOK {
		t.Fatalf("done = %+v, err = %v", r.done, r.err)
	}
	var got, want []string
	for _, f := range r.frames {
		switch f.Type {
		case frames.TypeStdout, frames.TypeStderr:
			for _, line := range strings.Split(strings.TrimSuffix(f.Data, "\n"), "\n") {
				got = append(got, line)
			}
		case frames.TypeDisplay:
			s, _ := f.Bundle.Text("text/plain")
			got = append(got, "D"+s)
		case frames.TypeSync:
			t.Fatalf("a sync frame reached the caller")
		}
	}
	for i := range n {
		want = append(want, fmt.Sprint("o ", i), fmt.Sprint("e ", i))
		if i%7 == 0 {
			want = append(want, fmt.Sprint("D", i))
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("order differs at item %d: got %q, want %q", i, got[max(0, i-3):min(len(got), i+4)], want[max(0, i-3):min(len(want), i+4)])
			}
		}
		t.Fatalf("got %d items, want %d", len(got), len(want))
	}
}
