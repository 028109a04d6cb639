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
