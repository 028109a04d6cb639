//go:build unix

package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ReadyFDEnv names the descriptor a started process writes "ready" to.
const ReadyFDEnv = "EVALHOST_DAEMON_READY_FD"

// spawn starts a background process in its own session (no terminal: a
// Ctrl-C in the shell that started it does not reach it), its stderr
// appended to the log, and waits until it says it is ready or exits.
func spawn(ctx context.Context, cfg DialConfig) error {
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	// Never through a link, as lockFile: one planted while the directory
	// was open to others would send the process's stderr where it points.
	log, err := os.OpenFile(cfg.Paths.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if fi, lerr := os.Lstat(cfg.Paths.Log); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return &UnsafeError{Path: cfg.Paths.Log, Reason: "is a symbolic link, not the log evalhost made"}
		}
		return err
	}
	defer log.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd := cfg.Command()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, log, log
	cmd.ExtraFiles = []*os.File{pw}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, ReadyFDEnv+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	logStart, _ := log.Seek(0, 2)
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return &StartError{Err: err}
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	pr.SetReadDeadline(deadline)
	line, rerr := bufio.NewReader(pr).ReadString('\n')
	if strings.TrimSpace(line) == "ready" {
		return cmd.Process.Release() // it outlives this client
	}
	if errors.Is(rerr, os.ErrDeadlineExceeded) {
		cmd.Process.Kill()
		rerr = fmt.Errorf("it did not say it was ready within %s", timeout)
	} else {
		rerr = errors.New("it exited before it was ready")
	}
	cmd.Wait()
	return &StartError{Err: rerr, Log: logTail(cfg.Paths.Log, logStart)}
}

// SignalReady tells the client that started this process that it is
// ready (see ReadyFDEnv); it does nothing in a process started otherwise.
func SignalReady() {
	n, err := strconv.Atoi(os.Getenv(ReadyFDEnv))
	if err != nil || n < 3 {
		return
	}
	os.Unsetenv(ReadyFDEnv)
	f := os.NewFile(uintptr(n), "ready")
	if f == nil {
		return
	}
	f.WriteString("ready\n")
	f.Close()
}
