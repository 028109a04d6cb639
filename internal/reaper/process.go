package reaper

import (
	"sync"
	"syscall"
)

// process is a started reaper, waited for and killed by pid. Not an
// os.Process: on Linux the first one a program makes forks a probe child to
// check pidfd support, ~0.2 ms of CPU and at times milliseconds on a loaded
// machine, which a spare's start would wait for.
type process struct {
	Pid    int
	mu     sync.Mutex
	exited bool // waitable or reaped: its pid may be another process's soon
}

// Kill sends SIGKILL unless the process has exited.
func (p *process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exited {
		_ = syscall.Kill(p.Pid, syscall.SIGKILL)
	}
}

// Wait waits for the process to exit and reaps it. Call it once.
func (p *process) Wait() (syscall.WaitStatus, error) {
	// Exited but not reaped: its pid cannot be reused until Wait4 below,
	// so a Kill that still sees exited false signals this process.
	awaitExit(p.Pid)
	p.mu.Lock()
	p.exited = true
	p.mu.Unlock()
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(p.Pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return ws, err
		}
	}
}

// exitedReapers are reapers that reported their child's exit and were
// about to exit themselves, not yet collected.
var exitedReapers struct {
	mu   sync.Mutex
	list []*process
}

// collect reaps a reaper that has reported: now if it is gone already,
// else later (collectExited), since it exits right after its report.
func (p *process) collect() {
	exitedReapers.mu.Lock()
	exitedReapers.list = append(exitedReapers.list, p)
	exitedReapers.mu.Unlock()
	collectExited()
}

// collectExited reaps every reported reaper that has exited, without
// blocking, so a long-lived program leaves no zombies behind.
func collectExited() {
	exitedReapers.mu.Lock()
	defer exitedReapers.mu.Unlock()
	left := exitedReapers.list[:0]
	for _, p := range exitedReapers.list {
		if !p.tryReap() {
			left = append(left, p)
		}
	}
	clear(exitedReapers.list[len(left):])
	exitedReapers.list = left
}

// tryReap reaps p if it has exited; true once it is reaped (or not ours).
func (p *process) tryReap() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ws syscall.WaitStatus
	for {
		got, err := syscall.Wait4(p.Pid, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil || got == p.Pid:
			p.exited = true
			return true
		default:
			return false
		}
	}
}
