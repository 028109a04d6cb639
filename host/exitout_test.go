package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// exitPipes is a last cell's exit as the runner writes it on each pipe,
// after the cell printed to stdout, then stderr (lastCellOwn): the cell's
// end marks and done, then the exit's position marks and sync frames
// (core._exit_fast) for an atexit handler that prints to stdout, stderr,
// stdout, each fd's owed mark paid before its text.
type exitPipes struct{ fd1, fd2, fd3 []event }

var (
	// Both pipes held bytes at done, so both got an end mark.
	exitBothMarked = exitPipes{
		fd1: []event{endMark(1), posMark(1, 2), text(1, "exit out\n"), posMark(1, 3), posMark(1, 4), text(1, "exit out again\n")},
		fd2: []event{endMark(2), posMark(2, 3), text(2, "exit err\n"), posMark(2, 4)},
		fd3: []event{doneFrame(0), exitSync2, exitSync3, exitSync4},
	}
	// The host had read all of stdout by done, which left it unmarked.
	exitStdoutUnmarked = exitPipes{
		fd1: exitBothMarked.fd1[1:],
		fd2: exitBothMarked.fd2,
		fd3: []event{doneFrame(1), exitSync2, exitSync3, exitSync4},
	}
	exitSync2 = syncFrame(2, 3) // both pipes were clean and empty: each owes mark 2 (fd 1 pays it)
	exitSync3 = syncFrame(3, 2) // fd 2 still clean: it owes mark 3, paid before "exit err"
	exitSync4 = syncFrame(4, 1) // fd 1 clean since mark 3: it owes mark 4

	lastCellOwn = []event{
		{kind: evFrame, fd: 3, frame: frames.Frame{Type: frames.TypeStarted, ID: "c1"}},
		text(1, "cell out"), posMark(1, 1), syncFrame(1, 2), posMark(2, 1), text(2, "cell err"),
	}
	streamsEnd = []event{{kind: evEOF, fd: 1}, {kind: evEOF, fd: 2}, {kind: evEOF, fd: 3}}
	exitWant   = "cell out|cell err|exit out\n|exit err\n|exit out again\n"
)

func text(fd int, s string) event { return event{kind: evText, fd: fd, text: s} }

func endMark(fd int) event { return event{kind: evMark, fd: fd, text: "c1"} }

func posMark(fd, k int) event {
	return event{kind: evMark, fd: fd, text: fmt.Sprintf("%s%d", posMarkID, k)}
}

func syncFrame(pos int, unmarked uint8) event {
	return event{kind: evFrame, fd: 3, frame: frames.Frame{Type: frames.TypeSync, ID: "c1", Pos: pos, Unmarked: unmarked}}
}

func doneFrame(unmarked uint8) event {
	return event{kind: evFrame, fd: 3, frame: frames.Frame{Type: frames.TypeDone, ID: "c1", Status: "ok", Unmarked: unmarked}}
}

// routeLastCell routes a last cell's own output, then events, then the
// end of the three streams, as the pump does, and returns what the cell's
// caller got of stdout and stderr, "|"-separated. (Where done goes among
// them is not seen: Execute returns it after all.) out, empty, is the
// cell's, reused as the pump reuses it.
func routeLastCell(t *testing.T, out chan frames.Frame, events []event) string {
	t.Helper()
	p := &Process{readyCh: make(chan frames.Frame, 1)}
	r := router{p: p}
	defer r.late.stop()
	defer r.order.stop()
	c := &cell{id: "c1", out: out, leaving: true}
	r.attach(c)
	for _, evs := range [][]event{lastCellOwn, events, streamsEnd} {
		for _, ev := range evs {
			r.event(ev)
			r.finishIfComplete()
		}
	}
	if len(c.queue) > 0 || c.heldLen() > 0 || len(c.after) > 0 {
		t.Fatalf("output left at the streams' end: queue %d held %d after %d", len(c.queue), c.heldLen(), len(c.after))
	}
	var got []string
	for len(out) > 0 {
		if f := <-out; f.Type == frames.TypeStdout || f.Type == frames.TypeStderr {
			got = append(got, f.Data)
		}
	}
	return strings.Join(got, "|")
}

// newOut has room for every frame a routeLastCell cell gets: the pump
// would block on more.
func newOut() chan frames.Frame { return make(chan frames.Frame, 16) }

func concat(lists ...[]event) []event {
	var all []event
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

// The interleavings of a loaded machine that broke TestRunAtExitOrder
// (about 1 in 40 runs): stdout's exit text routed after everything else.
// The end mark on stdout told nothing of the exit's position marks behind
// it, yet released the exit's sync frames, so "exit err", held for the
// frame before it, went out before "exit out".
func TestExitOutputOrderStdoutLate(t *testing.T) {
	e := exitBothMarked
	if got := routeLastCell(t, newOut(), concat(e.fd2, e.fd3, e.fd1)); got != exitWant {
		t.Errorf("order %q, want %q", got, exitWant)
	}
	// As above, with the frames read together (one evFrames event), so the
	// cell becomes complete only after all of them were routed.
	batch := event{kind: evFrames, fd: 3}
	for _, ev := range e.fd3 {
		batch.frames = append(batch.frames, ev.frame)
	}
	if got := routeLastCell(t, newOut(), concat(e.fd1[:1], e.fd2, []event{batch}, e.fd1[1:])); got != exitWant {
		t.Errorf("frames in one read: order %q, want %q", got, exitWant)
	}
}

// Exit text read before done on a pipe that done leaves unmarked was held
// as the cell's own, and went out with the cell's output, ahead of exit
// text the other pipe had written before it.
func TestExitOutputOrderStdoutBeforeDone(t *testing.T) {
	e := exitStdoutUnmarked
	if got := routeLastCell(t, newOut(), concat(e.fd1, e.fd2, e.fd3)); got != exitWant {
		t.Errorf("order %q, want %q", got, exitWant)
	}
}

// Every order in which the pump can get the three pipes' events (each
// pipe's own order kept) gives the order the exit wrote.
func TestExitOutputOrderAnyInterleaving(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    exitPipes
	}{{"both marked", exitBothMarked}, {"stdout unmarked", exitStdoutUnmarked}} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e
			pipes := [][]event{e.fd1, e.fd2, e.fd3}
			out := newOut()
			var at [3]int
			seq := make([]event, 0, len(e.fd1)+len(e.fd2)+len(e.fd3))
			n, bad := 0, 0
			var walk func()
			walk = func() {
				if len(seq) == cap(seq) {
					n++
					if got := routeLastCell(t, out, seq); got != exitWant {
						if bad++; bad <= 3 {
							t.Errorf("order %q, want %q; events:\n%s", got, exitWant, describe(seq))
						}
					}
					return
				}
				for i, evs := range pipes {
					if at[i] < len(evs) {
						seq = append(seq, evs[at[i]])
						at[i]++
						walk()
						at[i]--
						seq = seq[:len(seq)-1]
					}
				}
			}
			walk()
			if bad > 0 {
				t.Errorf("%d of %d interleavings out of order", bad, n)
			}
		})
	}
}

func describe(evs []event) string {
	var b strings.Builder
	for _, ev := range evs {
		switch ev.kind {
		case evText:
			fmt.Fprintf(&b, "  fd %d text %q\n", ev.fd, ev.text)
		case evMark:
			fmt.Fprintf(&b, "  fd %d mark %q\n", ev.fd, ev.text)
		case evFrame:
			fmt.Fprintf(&b, "  fd 3 %s pos %d unmarked %d\n", ev.frame.Type, ev.frame.Pos, ev.frame.Unmarked)
		}
	}
	return b.String()
}
