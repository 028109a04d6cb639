package launch

import (
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/internal/reaper/reap"
)

// A Spare is a reaper started before its child is known: it waits on a
// Unix socket (Sock's peer) for the child's reap.Spec and descriptors.
type Spare struct {
	Pid      int
	Sock     *os.File // this end of the socket the Spec goes through
	Lifeline *os.File // write end; closing it ends the reaper
	StatusR  *os.File // the reaper's reports
	Started  time.Time
}

// StartSpare starts a spare reaper of this program now.
func StartSpare() (*Spare, error) {
	exe, err := Exe()
	if err != nil {
		return nil, err
	}
	fds, err := socketpair()
	if err != nil {
		return nil, err
	}
	sock := os.NewFile(uintptr(fds[0]), "reaper-spec")
	child := os.NewFile(uintptr(fds[1]), "reaper-spec")
	defer child.Close()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		sock.Close()
		return nil, err
	}
	defer lifeR.Close()
	statR, statW, err := os.Pipe()
	if err != nil {
		sock.Close()
		lifeW.Close()
		return nil, err
	}
	defer statW.Close()
	pid, at, err := Process(exe, []string{"evalhost-reaper"}, spareEnv(), "", []*os.File{nil, nil, nil, lifeR, statW, child})
	if err != nil {
		sock.Close()
		lifeW.Close()
		statR.Close()
		return nil, err
	}
	return &Spare{Pid: pid, Sock: sock, Lifeline: lifeW, StatusR: statR, Started: at}, nil
}

// spareEnv is only what the Go runtime of a reaper reads: the child's
// environment comes with its Spec. One P from the runtime's start: the
// reaper only waits.
func spareEnv() []string {
	env := []string{reap.EnvVar + "=" + reap.Spare + ",gomaxprocs", "GOMAXPROCS=1"}
	for _, k := range []string{"GODEBUG", "GOTRACEBACK", "GORACE"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// socketpair is a connected pair of Unix stream sockets, close-on-exec.
func socketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, os.NewSyscallError("socketpair", err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}

// begin is one start Begin began: sp and err are set before done closes,
// and not changed after.
type begin struct {
	done chan struct{}
	sp   *Spare
	err  error
}

// begun is the start Begin began, until Take takes it.
var begun struct {
	mu sync.Mutex
	b  *begin
}

// Begin starts a spare in the background and returns at once; Take gets
// it. A call while one is begun and not taken does nothing.
func Begin() {
	begun.mu.Lock()
	defer begun.mu.Unlock()
	if begun.b != nil {
		return
	}
	b := &begin{done: make(chan struct{})}
	begun.b = b
	go func() {
		b.sp, b.err = StartSpare()
		close(b.done)
	}()
}

// Take waits for the spare Begin started and hands it over: nil and nil
// when none was begun (or it was taken already), nil and the error when
// it could not be started.
func Take() (*Spare, error) {
	begun.mu.Lock()
	b := begun.b
	begun.b = nil
	begun.mu.Unlock()
	if b == nil {
		return nil, nil
	}
	<-b.done
	return b.sp, b.err
}

// Peek waits for the spare Begin started, as Take does, and reports its
// pid without taking it: 0 and nil when none is begun. For tests and
// diagnostics; the spare stays Take's.
func Peek() (pid int, err error) {
	begun.mu.Lock()
	b := begun.b
	begun.mu.Unlock()
	if b == nil {
		return 0, nil
	}
	<-b.done
	if b.err != nil {
		return 0, b.err
	}
	return b.sp.Pid, nil
}
