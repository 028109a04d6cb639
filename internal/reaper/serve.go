package reaper

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// init turns this program into a reaper when it was started as one, before
// main and before anything else of the program runs.
func init() {
	if conf, ok := os.LookupEnv(envVar); ok {
		os.Exit(serve(conf, os.Args[1:]))
	}
}

// serve is the reaper: fds 0..n-1 are the child's, fd n the lifeline, fd
// n+1 the status pipe; args are the child's path and argv.
func serve(conf string, args []string) int {
	runtime.GOMAXPROCS(1) // it only waits; fewer threads, less memory
	nStr, tty := strings.CutSuffix(conf, ",tty")
	n, err := strconv.Atoi(nStr)
	if err != nil || n < 3 || len(args) < 2 {
		fmt.Fprintf(os.Stderr, "evalhost-reaper: started with %s=%q and %d arguments; only evalhost starts it\n", envVar, conf, len(args))
		return 2
	}
	// Before anything else: a terminating signal that arrives while the
	// child starts must still end in a clean-up, not in the Go default exit.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	syscall.CloseOnExec(n)
	syscall.CloseOnExec(n + 1)
	status := os.NewFile(uintptr(n+1), "status")
	lifeline := os.NewFile(uintptr(n), "lifeline")
	becomeSubreaper()
	fds := make([]uintptr, n)
	for i := range fds {
		fds[i] = uintptr(i)
	}
	pid, err := syscall.ForkExec(args[0], args[1:], &syscall.ProcAttr{
		Env:   withoutVar(os.Environ()),
		Files: fds,
		Sys:   childAttr(tty),
	})
	if err != nil {
		fmt.Fprintf(status, "error run %s: %v\n", args[0], err)
		return 127
	}
	fmt.Fprintf(status, "pid %d\n", pid)
	releaseFDs(n) // so the child's pipes and terminal close when it is gone
	ws := watch(pid, lifeline, sigs)
	fmt.Fprintf(status, "exit %d\n", uint32(ws))
	return 0
}

// watch waits for the child to exit, the lifeline to close or a terminating
// signal; then it kills everything below the reaper and returns the child's
// wait status once every child of the reaper is reaped.
func watch(pid int, lifeline *os.File, sigs <-chan os.Signal) syscall.WaitStatus {
	r := startReaping(pid)
	ended := make(chan struct{})
	go func() {
		var b [1]byte
		_, _ = lifeline.Read(b[:]) // only EOF: nobody writes to it
		close(ended)
	}()
	select {
	case <-r.childExited:
	case <-ended:
	case <-sigs:
	}
	// Kill until every child is reaped: a process forked while a kill was
	// under way is re-parented to the reaper and found by the next round.
	for {
		killTree(pid)
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-r.allGone:
			t.Stop()
			return r.status
		case <-r.progress:
		case <-t.C:
		}
		t.Stop()
	}
}

// reaping is the one goroutine that reaps the reaper's children: the child,
// and on Linux the orphans re-parented to it.
type reaping struct {
	childExited chan struct{} // closed once the child is reaped; status is set
	progress    chan struct{} // a child was reaped
	allGone     chan struct{} // closed when no child is left
	status      syscall.WaitStatus
}

func startReaping(pid int) *reaping {
	r := &reaping{childExited: make(chan struct{}), progress: make(chan struct{}, 1), allGone: make(chan struct{})}
	go func() {
		defer close(r.allGone)
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return // ECHILD: nothing is left below the reaper
			}
			if got == pid {
				r.status = ws
				close(r.childExited)
			}
			select {
			case r.progress <- struct{}{}:
			default:
			}
		}
	}()
	return r
}

// releaseFDs points fds 0-2 at /dev/null and closes 3..n-1, so that only
// the child holds its pipes and terminal.
func releaseFDs(n int) {
	if null, err := syscall.Open(os.DevNull, syscall.O_RDWR, 0); err == nil {
		for fd := range 3 {
			_ = dup2(null, fd)
		}
		if null > 2 {
			_ = syscall.Close(null)
		}
	}
	for fd := 3; fd < n; fd++ {
		_ = syscall.Close(fd)
	}
}

func withoutVar(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, envVar+"=") {
			out = append(out, kv)
		}
	}
	return out
}
