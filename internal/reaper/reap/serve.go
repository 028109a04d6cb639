package reap

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// EnvVar marks a process started as a reaper. Its value is the number of
// descriptors the child gets, then ",tty" when fd 0 (",ttyN": fd N) becomes the child's
// terminal, then ",idle" for an idle child (Spec.Idle), then ",gomaxprocs" when the starter added GOMAXPROCS=1 to the
// reaper's environment (the runtime then starts with one P, no stop of
// the world to shrink to it), which the reaper takes out of the child's.
const EnvVar = "EVALHOST_REAPER"

// init turns this program into a reaper when it was started as one, before
// main and before most packages' init. It exits through syscall.Exit, not
// os.Exit: a binary built with -race would otherwise sleep a second at exit
// (GORACE atexit_sleep_ms), and the host waits for that.
func init() {
	if conf, ok := os.LookupEnv(EnvVar); ok {
		syscall.Exit(serve(conf, os.Args[1:]))
	}
}

// serve is the reaper: fds 0..n-1 are the child's, fd n the lifeline, fd
// n+1 the status pipe; args are the child's path and argv. A spare (conf
// Spare) has n = 3 and learns its child from fd 5 instead (spec.go).
func serve(conf string, args []string) int {
	conf, gomaxprocs := cutSuffix(conf, ",gomaxprocs")
	conf, idle := cutSuffix(conf, ",idle")
	spare := conf == Spare
	nStr, ttyStr, _ := cutByte(conf, ',')
	ttyFd, tty, ok := parseTTY(ttyStr)
	if ttyStr == "" {
		ttyFd, tty, ok = 0, false, true
	}
	n, err := strconv.Atoi(nStr)
	if spare {
		n, err = 3, nil
	}
	if err != nil || !ok || n < 3 || ttyFd >= n || len(args) < 2 && !spare {
		os.Stderr.WriteString("evalhost-reaper: started with " + EnvVar + "=" + strconv.Quote(conf) + " and " +
			strconv.Itoa(len(args)) + " arguments; only evalhost starts it\n")
		return 2
	}
	sigs := make(chan os.Signal, 1)
	syscall.CloseOnExec(n)
	syscall.CloseOnExec(n + 1)
	// Non-blocking, so the lifeline is read through Go's poller and no
	// thread sits in read(2): fewer threads make the reaper's own exit
	// quicker.
	_ = syscall.SetNonblock(n, true)
	status := os.NewFile(uintptr(n+1), "status")
	lifeline := os.NewFile(uintptr(n), "lifeline")
	becomeSubreaper()
	var child Spec
	var fds []int
	if spare {
		var ok bool
		if child, fds, ok = awaitSpec(n + 2); !ok {
			return 0 // dropped, or its starter is gone: nothing to do
		}
	} else {
		child = Spec{Path: args[0], Argv: args[1:], Env: childEnv(os.Environ(), gomaxprocs), TTY: tty, TTYFd: ttyFd, Idle: idle}
		for fd := range n {
			fds = append(fds, fd)
		}
	}
	if child.TTY && child.TTYFd >= len(fds) {
		_, _ = status.WriteString("error run " + child.Path + ": its terminal's fd " + strconv.Itoa(child.TTYFd) +
			" is not one of its " + strconv.Itoa(len(fds)) + " descriptors\n")
		return 127
	}
	forkFirst := child.Idle && idleFirst
	if !forkFirst {
		notifyTerminating(sigs) // before the fork: the child may fork at once
	}
	pid, err := syscall.ForkExec(child.Path, child.Argv, &syscall.ProcAttr{
		Env:   child.Env,
		Dir:   child.Dir,
		Files: uintptrs(fds),
		Sys:   childAttr(child.TTY, child.TTYFd),
	})
	if err != nil {
		_, _ = status.WriteString("error run " + child.Path + ": " + err.Error() + "\n")
		return 127
	}
	if forkFirst {
		notifyTerminating(sigs) // while it starts: its first request comes after the report
	}
	_, _ = status.WriteString("pid " + strconv.Itoa(pid) + "\n")
	// SIGCHLD only now, off the child's start (each Notify is a round trip
	// with the runtime's signal-mask thread): none is missed, since watch
	// reaps before it first waits for one.
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	releaseFDs(n) // so the child's pipes and terminal close when it is gone
	if spare {
		for _, fd := range fds {
			_ = syscall.Close(fd)
		}
	}
	ws := watch(pid, lifeline, sigs, chld)
	_, _ = status.WriteString("exit " + strconv.FormatUint(uint64(uint32(ws)), 10) + "\n")
	return 0
}

// awaitSpec waits for a spare's child on the socket sock. ok is false, and
// every descriptor received is closed, when the socket closed (the spare
// was dropped or its starter died) or the message was not a child with fds
// 0, 1 and 2. A terminating signal meanwhile ends the spare, which has
// nothing to clean up, as Go's default (notifyTerminating).
func awaitSpec(sock int) (s Spec, fds []int, ok bool) {
	syscall.CloseOnExec(sock)
	s, fds, ok = receiveSpec(sock)
	if !ok || len(fds) < 3 {
		for _, fd := range fds {
			_ = syscall.Close(fd)
		}
		return Spec{}, nil, false
	}
	return s, fds, true
}

// notifyTerminating hands SIGTERM, SIGINT and SIGHUP to sigs, but one this
// process inherited as ignored (nohup): that stays ignored, so the child
// inherits it too. Go keeps only SIGHUP's and SIGINT's inherited ignore;
// its runtime replaces SIGTERM's before this runs (README).
//
// serve calls it before the child's fork: a terminating signal that
// arrives while the child starts must end in a clean-up, not in the Go
// default exit, and the child runs from the moment ForkExec returns (sh
// forks within a millisecond; a Notify, a thread for the runtime's signal
// mask and a round trip with it per signal, takes 0.1-1 ms:
// TestSignalAsChildStartsEndsEverything). A spare has nothing to clean up
// before its Spec, and subscribes only once it has come.
//
// An idle child (Spec.Idle: an interpreter that starts nothing before its
// first request, which its starter sends once Start has returned) is
// forked first on Linux (idleFirst), and the Notify goes on while it
// starts (~0.5 ms off every interpreter's start, tens of ms on a loaded
// machine); the pid is reported only after it, so no request reaches the
// child before the reaper is subscribed (TestSignalAsChildStartsEndsEverything's
// idle rows). A terminating signal in that window ends the reaper as Go's
// default, and the child with it (its parent-death signal) still in its own
// start-up: what that start-up forked meanwhile (a .pth file, the runner's
// prelude and preloaded modules, IPython's start) can outlive it, nothing a
// cell started. Elsewhere, with no parent-death signal, every child waits
// for the subscription.
//
// A reaper that dies of one of them before its pid report has therefore
// run nothing of its child's work, and its starter may start the child
// again (package reaper's notStarted).
func notifyTerminating(sigs chan<- os.Signal) {
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
}

func uintptrs(fds []int) []uintptr {
	out := make([]uintptr, len(fds))
	for i, fd := range fds {
		out[i] = uintptr(fd)
	}
	return out
}

// watch waits for the child to exit, the lifeline to close or a terminating
// signal; then it kills everything below the reaper and returns the child's
// wait status once every child of the reaper is reaped. It reaps on each
// SIGCHLD: the child, and on Linux the orphans re-parented to the reaper.
func watch(pid int, lifeline *os.File, sigs, chld <-chan os.Signal) syscall.WaitStatus {
	ended := make(chan struct{})
	// Ends at EOF, or with the process: the reaper exits right after watch.
	go func() {
		var b [1]byte
		_, _ = lifeline.Read(b[:]) // only EOF: nobody writes to it
		close(ended)
	}()
	var status syscall.WaitStatus
	stopping := false
	var retry <-chan time.Time
	for {
		exited, none := reap(pid, &status)
		if none {
			return status // nothing is left below the reaper
		}
		if exited || stopping {
			// Kill until every child is reaped: a process forked while a
			// kill was under way is re-parented to the reaper and found by
			// the next round.
			stopping = true
			killTree(pid)
			retry = time.After(20 * time.Millisecond)
		}
		select {
		case <-chld:
		case <-retry:
		case <-ended:
			stopping, ended = true, nil
		case <-sigs:
			stopping = true
		}
	}
}

// reap collects every child that has exited, without blocking. exited says
// the child is among them (its status is stored); none that the reaper has
// no child left at all.
func reap(pid int, status *syscall.WaitStatus) (exited, none bool) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return exited, true // ECHILD
		case got <= 0:
			return exited, false
		case got == pid:
			*status, exited = ws, true
		}
	}
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

// childEnv is the reaper's environment without what its starter added.
func childEnv(env []string, gomaxprocs bool) []string {
	out := env[:0:0]
	for _, kv := range env {
		if hasPrefix(kv, EnvVar+"=") || gomaxprocs && hasPrefix(kv, "GOMAXPROCS=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
