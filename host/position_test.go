package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// evTimeout stands for the posWait timer firing.
const evTimeout evKind = 99

// Events as the pump may receive them: the three pipes are read by three
// goroutines, so any interleaving that keeps each pipe's own order can
// happen. Whatever the interleaving, the cell's output must come out in the
// order the runner wrote it.
func TestPositionMarksOrderOutput(t *testing.T) {
	txt := func(fd int, s string) event { return event{kind: evText, fd: fd, text: s} }
	pos := func(fd int) event { return event{kind: evMark, fd: fd, text: posMarkID} }
	end := func(fd int) event { return event{kind: evMark, fd: fd, text: "c1"} }
	disp := func(s string) event {
		f := frames.Frame{Type: frames.TypeDisplay, ID: "c1", Bundle: frames.Bundle{}}
		f.Bundle.SetText("text/plain", s)
		return event{kind: evFrame, fd: 3, frame: f}
	}
	started := event{kind: evFrame, fd: 3, frame: frames.Frame{Type: frames.TypeStarted, ID: "c1"}}
	npos := func(fd, k int) event { return event{kind: evMark, fd: fd, text: fmt.Sprintf("%s%d", posMarkID, k)} }
	ndisp := func(s string, k int, unmarked uint8) event {
		ev := disp(s)
		ev.frame.Pos, ev.frame.Unmarked = k, unmarked
		return ev
	}
	cleanDone := event{kind: evFrame, fd: 3, frame: frames.Frame{Type: frames.TypeDone, ID: "c1", Status: "ok", Unmarked: 3}}
	read := func(fd int, parts ...part) event { return event{kind: evRead, fd: fd, parts: parts} }
	done := event{kind: evFrame, fd: 3, frame: frames.Frame{Type: frames.TypeDone, ID: "c1", Status: "ok"}}
	cases := []struct {
		name   string
		events []event
		want   string
	}{
		{name: "in write order",
			events: []event{txt(1, "a"), pos(1), pos(2), disp("D"), txt(1, "b"), end(1), end(2), done},
			want:   "a D b done"},
		{name: "frame pipe read first",
			events: []event{disp("D"), done, txt(1, "a"), pos(1), txt(1, "b"), end(1), pos(2), end(2)},
			want:   "a D b done"},
		{name: "text after the mark read before the frame",
			events: []event{txt(1, "a"), pos(1), txt(1, "b"), pos(2), txt(2, "e"), end(2), txt(1, "c"), end(1), disp("D"), done},
			want:   "a D b e c done"},
		{name: "all text and marks before any frame",
			events: []event{pos(2), end(2), txt(1, "a"), pos(1), txt(1, "b"), end(1), started, disp("D"), done},
			want:   "started a D b done"},
		{name: "two displays, stderr lagging",
			events: []event{txt(1, "a"), pos(1), txt(1, "b"), pos(1), txt(1, "c"), end(1), disp("D1"), disp("D2"), pos(2), pos(2), end(2), done},
			want:   "a D1 b D2 c done"},
		{name: "runner without position marks: frames after the text",
			events: []event{disp("D"), txt(1, "a"), txt(1, "b"), end(1), end(2), done},
			want:   "a b D done"},
		{name: "a mark without its frame stops holding text past the bound",
			events: []event{pos(1), pos(2), txt(1, strings.Repeat("x", maxHeld)), txt(1, "y"), end(1), end(2), done},
			want:   strings.Repeat("x", maxHeld) + " y done"},
		{name: "runner without position marks: a late frame goes out after posWait",
			events: []event{txt(1, "a"), disp("D"), {kind: evTimeout}, txt(1, "b"), end(1), end(2), done},
			want:   "a D b done"},
		{name: "text read before the started frame waits for it",
			events: []event{txt(1, "a"), txt(2, "e"), started, txt(1, "b"), end(1), end(2), done},
			want:   "started a e b done"},
		{name: "a runner without a started frame loses no text",
			events: []event{txt(1, "a"), txt(2, "e"), end(1), end(2), done},
			want:   "a e done"},
		{name: "a cell without text: no marks at all",
			events: []event{started, ndisp("D", 1, 3), cleanDone},
			want:   "started D done"},
		{name: "a clean pipe's owed mark holds the text after it",
			events: []event{started, read(1, part{text: "a"}, part{mark: true, text: posMarkID + "1"}, part{text: "b"}), end(1), ndisp("D", 1, 2), txt(2, "x"), end(2), done},
			want:   "started a D b x done"},
		{name: "a late owed mark on the clean pipe",
			events: []event{txt(1, "a"), npos(1, 1), ndisp("D", 1, 2), npos(2, 1), txt(2, "e"), end(1), end(2), done},
			want:   "a D e done"},
		{name: "numbered marks: the second frame's mark alone releases both",
			events: []event{txt(1, "a"), npos(1, 2), txt(1, "b"), ndisp("D1", 1, 3), ndisp("D2", 2, 2), end(1), end(2), done},
			want:   "a D1 D2 b done"},
		{name: "held text of both pipes goes out frame by frame",
			events: []event{txt(1, "a"), npos(1, 1), txt(1, "b"), npos(1, 2), txt(1, "c"), end(1),
				npos(2, 1), txt(2, "e"), npos(2, 2), txt(2, "f"), end(2), ndisp("D1", 1, 0), ndisp("D2", 2, 0), done},
			want: "a D1 b e D2 c f done"},
		{name: "a later pipe's text is held behind an earlier epoch",
			events: []event{npos(2, 1), npos(2, 2), txt(2, "f"), txt(1, "a"), npos(1, 1), txt(1, "b"), npos(1, 2), end(1), end(2),
				ndisp("D1", 1, 0), ndisp("D2", 2, 0), done},
			want: "a D1 b D2 f done"},
		{name: "done without end marks: text read after it is the next cell's",
			events: []event{txt(1, "a"), cleanDone, txt(1, "next")},
			want:   "a done"},
		{name: "text after the end mark waits for the next cell",
			events: []event{txt(1, "a"), end(1), txt(1, "next"), end(2), done},
			want:   "a done"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &Process{readyCh: make(chan frames.Frame, 1)}
			r := router{p: p}
			defer r.late.stop()
			defer r.order.stop()
			c := &cell{id: "c1", out: make(chan frames.Frame, 100)}
			r.attach(c)
			for _, ev := range tc.events {
				if ev.kind == evTimeout {
					r.orderTimeout()
				} else {
					r.event(ev)
				}
				r.finishIfComplete()
			}
			if r.cur != nil {
				t.Fatalf("cell not complete after all events; queue %d held %d", len(c.queue), c.heldLen())
			}
			var got []string
			for f := range c.out {
				if f.Type == endOfCell {
					break
				}
				switch f.Type {
				case frames.TypeStdout, frames.TypeStderr:
					got = append(got, f.Data)
				case frames.TypeDisplay:
					s, _ := f.Bundle.Text("text/plain")
					got = append(got, s)
				case frames.TypeDone:
					got = append(got, "done")
				case frames.TypeStarted:
					got = append(got, "started")
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("order = %q, want %q", strings.Join(got, " "), tc.want)
			}
		})
	}
}

// A flood of frames while much text waits for a later one: each frame's
// pass over the held text made the pump quadratic (minutes of CPU after an
// exit-output flood).
func BenchmarkHeldTextFlood(b *testing.B) {
	const texts, nFrames = 2000, 2000
	for b.Loop() {
		p := &Process{readyCh: make(chan frames.Frame, 1)}
		r := router{p: p}
		c := &cell{id: "c1", out: make(chan frames.Frame, texts+nFrames+8)}
		r.attach(c)
		for fd := 1; fd <= 2; fd++ {
			r.event(event{kind: evMark, fd: fd, text: fmt.Sprintf("%s%d", posMarkID, nFrames+1)})
		}
		for range texts {
			r.event(event{kind: evText, fd: 1, text: "x"})
		}
		for k := 1; k <= nFrames; k++ {
			f := frames.Frame{Type: frames.TypeDisplay, ID: "c1", Pos: k, Bundle: frames.Bundle{}}
			r.event(event{kind: evFrame, fd: 3, frame: f})
		}
		if len(c.out) < nFrames {
			b.Fatalf("%d frames delivered, want %d", len(c.out), nFrames)
		}
		r.late.stop()
		r.order.stop()
	}
}
