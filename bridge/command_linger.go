package bridge

// A command that succeeded may leave processes running that do not hold
// its output (`server >/dev/null 2>&1 &`): they run on, as they would have
// without a reaper, but under it, so they still end with evalhost. The
// reaper and the command's wrapper wait with them; sweep lets go of those
// whose processes have ended, so a long-lived evalhost (mcp) does not
// collect them, and Close ends the rest.

// linger keeps p while processes the command started run (as far as can
// be seen: on Linux), else ends it.
func (t *commandTools) linger(p *toolProc) {
	left := p.leftovers(false)
	t.mu.Lock()
	closed := t.closed
	switch {
	case closed:
	case left:
		t.lingering = append(t.lingering, p)
	default:
		t.ending.Add(1) // under the lock: Close waits only once closed is set
	}
	t.mu.Unlock()
	switch {
	case closed:
		p.end(true)
	case !left:
		// Nothing to wait for but the wrapper's and the reaper's exits:
		// off the call's path (about 2 ms), owned by Close.
		go func() { defer t.ending.Done(); p.end(false) }()
	}
}

// sweep ends the lingering calls whose processes have all ended.
func (t *commandTools) sweep() {
	t.mu.Lock()
	var done []*toolProc
	kept := t.lingering[:0]
	for _, p := range t.lingering {
		if p.leftovers(false) {
			kept = append(kept, p)
		} else {
			done = append(done, p)
		}
	}
	clear(t.lingering[len(kept):])
	t.lingering = kept
	t.mu.Unlock()
	for _, p := range done {
		p.end(false)
	}
}

// Close kills what the tools' commands left running and waits until it is
// gone. Calls after it still run, but keep nothing running past their end.
// Safe to call twice.
func (t *commandTools) Close() error {
	t.mu.Lock()
	t.closed = true
	ps := t.lingering
	t.lingering = nil
	t.mu.Unlock()
	for _, p := range ps {
		p.end(true)
	}
	t.ending.Wait()
	return nil
}
