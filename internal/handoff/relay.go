package handoff

import "sync"

// Relay passes the right to read between goroutines; see the package doc.
type Relay struct {
	next  func() func()
	done  <-chan struct{}
	wg    *sync.WaitGroup
	spare chan struct{} // a goroutine parked after its work takes the reading over
}

// New returns a Relay reading with next, whose work is counted in wg; done
// closed sends parked goroutines home.
func New(next func() func(), done <-chan struct{}, wg *sync.WaitGroup) *Relay {
	return &Relay{next: next, done: done, wg: wg, spare: make(chan struct{})}
}

// Read reads until next returns nil, running each work after handing the
// reading on, then parking until it is needed as a reader again.
func (r *Relay) Read() {
	for {
		work := r.next()
		if work == nil {
			return
		}
		select {
		case r.spare <- struct{}{}:
		default:
			go r.Read()
		}
		work()
		select {
		case <-r.spare:
			r.wg.Done()
		case <-r.done:
			r.wg.Done()
			return
		}
	}
}
