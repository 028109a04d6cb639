package handoff

import (
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// While one line's work blocks, the next lines are still read and their
// work run; every work runs once; after the end and done, the goroutines
// exit and wg is counted off.
func TestRelayReadsOnWhileWorkRuns(t *testing.T) {
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	leakcheck.Check(t, leakcheck.Options{})
	lines := make(chan int)
	var wg sync.WaitGroup
	release := make(chan struct{})
	ran := make(chan int, 10)
	done := make(chan struct{})
	next := func() func() {
		n, ok := <-lines
		if !ok {
			return nil
		}
		wg.Add(1)
		return func() {
			if n == 0 {
				<-release // blocks until a later line's work has run
			}
			ran <- n
		}
	}
	ended := make(chan struct{})
	go func() { New(next, done, &wg).Read(); close(ended) }()
	lines <- 0
	for n := 1; n <= 3; n++ {
		lines <- n // read although work 0 still blocks
		if got := <-ran; got != n {
			t.Fatalf("work %d ran, want %d", got, n)
		}
	}
	close(release)
	if got := <-ran; got != 0 {
		t.Fatalf("work %d ran, want the blocked 0", got)
	}
	close(lines) // the reader meets the end
	close(done)  // the parked goroutines leave, each counted off wg
	wg.Wait()
	<-ended
}
