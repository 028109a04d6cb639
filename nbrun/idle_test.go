package nbrun

import (
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// A cell's end not followed by another cell's start comes to OnIdle; one
// followed by a start does not, and neither does one at the run's end.
// Driven by hand: a gap between two cells of a real interpreter cannot be
// made to order.
func TestOnIdleSeesAnEndNothingFollows(t *testing.T) {
	newRun := func(after time.Duration) (*runState, chan struct{}) {
		nb := notebook.New()
		for i := 0; i < 2; i++ {
			if err := nb.Insert(i, notebook.Code, "x = 1"); err != nil {
				t.Fatal(err)
			}
		}
		idle := make(chan struct{}, 1)
		return &runState{nb: nb, rec: NewRecorder(nb), cells: []int{0, 1}, current: -1,
			onIdle: func() { idle <- struct{}{} }, idleAfter: after}, idle
	}
	started := frames.Frame{Type: frames.TypeStdout, Data: "x\n"}

	t.Run("nothing follows", func(t *testing.T) {
		s, idle := newRun(time.Millisecond)
		s.emit(0, started)
		s.cellEnd(sessions.CellResult{Index: 0, Status: sessions.StatusOK})
		<-idle // the test's deadline bounds the wait
	})
	t.Run("the next cell starts", func(t *testing.T) {
		s, idle := newRun(time.Hour)
		s.emit(0, started)
		s.cellEnd(sessions.CellResult{Index: 0, Status: sessions.StatusOK})
		if s.idle == nil {
			t.Fatal("no wait for OnIdle after the cell's end")
		}
		s.emit(1, started)
		if s.idle != nil {
			t.Fatal("the next cell's start left the wait for OnIdle on")
		}
		select {
		case <-idle:
			t.Fatal("OnIdle called after the next cell started")
		default:
		}
	})
}
