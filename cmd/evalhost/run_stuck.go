package main

import (
	"syscall"
	"time"
)

// stuckOutput bounds how long a run that was sent a signal waits on a
// write of its output that no reader takes (`evalhost run ... | sleep
// 600`): python3 dies at once there (SIGTERM's default; SIGINT's EINTR
// turns the blocked write into a KeyboardInterrupt), where the run, whose
// cells' output goes out in order, blocked in that write for ever, its
// interpreter gone. A reader that is only slow takes something within it.
const stuckOutput = 5 * time.Second

// stuckPoll is how often the watch looks at the writes in progress.
const stuckPoll = 500 * time.Millisecond

// writeStarted and writeEnded bracket a write of stdout's (slot 0) or
// stderr's (1); stuckFor is how long the oldest write in progress has
// waited.
func (in *interrupts) writeStarted(slot int) { in.writing[slot].Store(time.Now().UnixNano()) }
func (in *interrupts) writeEnded(slot int)   { in.writing[slot].Store(0) }

func (in *interrupts) stuckFor() time.Duration {
	var most time.Duration
	for i := range in.writing {
		if t := in.writing[i].Load(); t != 0 {
			most = max(most, time.Since(time.Unix(0, t)))
		}
	}
	return most
}

// watchStuck starts, once, the watch that ends the run when a write of its
// output has waited stuckOutput after sig came: the interpreters are
// killed (without waiting: the kill may wait for that output too; the
// reapers end what is left once evalhost is gone) and evalhost dies of
// sig, as python3 would have. A run that ends before is not watched.
func (in *interrupts) watchStuck(sig syscall.Signal) {
	in.stuckOnce.Do(func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.stopped {
			return
		}
		in.wg.Add(1)
		go func() {
			defer in.wg.Done()
			t := time.NewTicker(stuckPoll)
			defer t.Stop()
			for {
				select {
				case <-in.quit:
					return
				case <-t.C:
				}
				if in.stuckFor() >= stuckOutput {
					go in.kill()
					exitAs(dieOf(sig))
				}
			}
		}()
	})
}
