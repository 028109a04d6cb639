package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

func init() {
	extraCommands["daemon"] = daemonMain
	extraCommands["sessions"] = sessionsMain
	extraCommands["kill"] = killMain
}

const daemonUsage = `Usage: evalhost daemon serve|stop|status

The background process that holds the sessions of "evalhost run --session"
across commands. The first such command starts it; it ends itself after
--idle without a client (EVALHOST_DAEMON_IDLE, default 30m), and keeps at
most --max-sessions idle sessions (EVALHOST_DAEMON_MAX_SESSIONS, default 16).

  serve    run it in the foreground (what a command starts)
  stop     end it and every session it holds
  status   say whether one runs, its pid and version
`

func daemonMain(args []string, _ io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, daemonUsage)
		return exitUsage
	}
	home, err := evalhostHome()
	if err != nil {
		fmt.Fprintf(stderr, "evalhost daemon: %v\n", err)
		return exitUsage
	}
	paths := daemon.PathsFor(home)
	if code, ok := checkDaemonArgs(args, stdout, stderr); !ok {
		return code
	}
	switch args[0] {
	case "serve":
		return daemonServe(args[1:], stderr, logger)
	case "stop":
		pid, err := daemon.Stop(paths)
		if errors.Is(err, daemon.ErrNotRunning) {
			fmt.Fprintln(stdout, "no evalhost background process is running")
			return exitOK
		}
		if err != nil {
			fmt.Fprintf(stderr, "evalhost daemon stop: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(stdout, "stopped the evalhost background process (pid %d)\n", pid)
		return exitOK
	case "status":
		c, err := daemon.Dial(paths)
		if errors.Is(err, daemon.ErrNotRunning) {
			// As daemon stop says it; the dial's own error (lstat of a
			// socket that is not there) tells the user nothing more.
			fmt.Fprintln(stdout, daemon.ErrNotRunning)
			return exitFailed
		}
		if err != nil { // one may run that this command cannot or will not reach
			fmt.Fprintf(stderr, "evalhost daemon status: %v\n", err)
			return exitFailed
		}
		defer c.Close()
		fmt.Fprintf(stdout, "running: pid %d, evalhost %s, socket %s\n", c.Hello.PID, c.Hello.Version, paths.Socket)
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, daemonUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "evalhost daemon: unknown command %q\n\n%s", args[0], daemonUsage)
	return exitUsage
}

// checkDaemonArgs refuses what follows stop or status (they take nothing):
// a --json or a stray word was silently ignored, and "daemon stop now"
// stopped it all the same. ok is false when daemonMain must return code.
func checkDaemonArgs(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if (args[0] != "stop" && args[0] != "status") || len(args) == 1 {
		return exitOK, true
	}
	switch args[1] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, daemonUsage)
		return exitOK, false
	}
	fmt.Fprintf(stderr, "evalhost daemon %s: takes no arguments or flags, got %q\n\n%s", args[0], args[1], daemonUsage)
	return exitUsage, false
}

func daemonServe(args []string, stderr io.Writer, logger *slog.Logger) int {
	// Before anything starts an interpreter, which would inherit them too.
	daemon.CloseInherited()
	var f daemonServeFlags
	fs := newDaemonServeFlagSet(&f)
	// An internal command (evalhost starts it): its help goes with its log.
	if code, ok := parseFlags(fs, args, stderr, stderr); !ok {
		return code
	}
	if err := f.complete(fs); err != nil {
		fmt.Fprintf(stderr, "evalhost daemon serve: %v\n", err)
		return exitUsage
	}
	home, err := evalhostHome()
	if err != nil {
		fmt.Fprintf(stderr, "evalhost daemon serve: %v\n", err)
		return exitUsage
	}
	starters, err := f.backend.starters(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost daemon serve: %v\n", err)
		return exitUsage
	}
	store, err := serverArtifactStore(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost daemon serve: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// No terminal; clients that leave are not its end. Caught, not
	// ignored: an ignored signal stays ignored in what the process starts,
	// and a session's interpreter and its children must get SIGHUP as
	// python3 and its children do (a script's p.send_signal(SIGHUP), a run
	// passing it on). A full channel drops what comes, so none is read.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP, syscall.SIGPIPE)
	defer sweepKilledShells()()
	err = daemon.Serve(ctx, daemon.Config{
		Paths:   daemon.PathsFor(home),
		Version: daemon.BuildIdentity(version),
		Idle:    f.idle,
		// What a command whose environment differs is told of (showSettings).
		Settings: daemonSettings(store, f.backend.choice(), f.idle, f.maxSessions),
		Sessions: sessions.Config{Home: home, Starters: starters, MaxSessions: f.maxSessions,
			Sink:          streamsink.Options{Store: store},
			StdinWithheld: withheldSession},
		Ready: daemon.SignalReady,
	})
	if err != nil {
		logger.Error("background process ended", "err", err)
		return exitFailed
	}
	return exitOK
}

// daemonServeFlags are daemon serve's flags.
type daemonServeFlags struct {
	idle        time.Duration
	maxSessions int
	backend     backendFlags
}

func newDaemonServeFlagSet(f *daemonServeFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("daemon serve", pflag.ContinueOnError)
	fs.DurationVar(&f.idle, "idle", daemon.DefaultIdle, "end after this long without a client (else EVALHOST_DAEMON_IDLE, else the default)")
	fs.IntVar(&f.maxSessions, "max-sessions", defaultDaemonSessions,
		"idle sessions kept beyond this many are ended, least recently used first (else EVALHOST_DAEMON_MAX_SESSIONS, else the default)")
	f.backend.register(fs)
	return fs
}

// complete takes what a flag not given leaves to its variable, and checks
// --max-sessions. A flag given wins, and its variable is not read: a bad
// EVALHOST_DAEMON_MAX_SESSIONS refused --max-sessions 2. One not given
// refuses a bad variable, though the command that started this one
// refused it already (checkDaemonEnv): by hand it is a mistake.
func (f *daemonServeFlags) complete(fs *pflag.FlagSet) error {
	if !fs.Changed("idle") {
		idle, err := daemonIdle()
		if err != nil {
			return err
		}
		f.idle = idle
	}
	if !fs.Changed("max-sessions") {
		n, err := daemonMaxSessions()
		if err != nil {
			return err
		}
		f.maxSessions = n
	}
	if f.maxSessions < 1 || f.maxSessions > maxDaemonSessions {
		return fmt.Errorf("--max-sessions %d: want a whole number of sessions from 1 to %d", f.maxSessions, maxDaemonSessions)
	}
	return nil
}

// daemonIdle reads EVALHOST_DAEMON_IDLE (a Go duration, "30m").
func daemonIdle() (time.Duration, error) {
	return idleFromEnv(os.Getenv("EVALHOST_DAEMON_IDLE"))
}

// idleFromEnv is EVALHOST_DAEMON_IDLE's value v as a duration; one that is
// set but not a positive duration is an error that says what it takes (as
// EVALHOST_DAEMON_MAX_SESSIONS's and EVALHOST_ARTIFACTS_MAX's), not the
// default: it decides when the sessions' state goes.
func idleFromEnv(v string) (time.Duration, error) {
	if v == "" {
		return daemon.DefaultIdle, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("EVALHOST_DAEMON_IDLE=%q: want a duration such as 10m or 2h (how long the background process waits without a client before it ends, and its sessions with it; default %v): set it so, or unset it",
		v, daemon.DefaultIdle)
}

// checkDaemonEnv refuses a bad value of what the background process reads
// as it starts (its idle time, its sessions' cap, the artifacts' cap and
// directory, the gateway's address), for
// a command that may start it: its own stderr is a log no one reads.
// Refused whether or not one runs, so a bad value is found when it is
// set, not at a later start.
func checkDaemonEnv(home string) error {
	if _, err := daemonIdle(); err != nil {
		return err
	}
	if _, err := daemonMaxSessions(); err != nil {
		return err
	}
	if err := config.CheckGatewayURL(); err != nil {
		return err
	}
	_, err := config.ArtifactStore(home)
	return err
}

// The idle sessions the background process keeps, unless
// EVALHOST_DAEMON_MAX_SESSIONS says otherwise, and the most it may say:
// each is an interpreter that lives on, and a typo's 10000 would keep
// thousands.
const (
	defaultDaemonSessions = 16
	maxDaemonSessions     = 1024
)

// daemonMaxSessions reads EVALHOST_DAEMON_MAX_SESSIONS, the idle sessions
// the background process a command starts keeps: a bad value is an error
// that says what it takes, never a silent default (the cap decides which
// session's state goes).
func daemonMaxSessions() (int, error) {
	v, ok := os.LookupEnv("EVALHOST_DAEMON_MAX_SESSIONS")
	if !ok || v == "" {
		return defaultDaemonSessions, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxDaemonSessions {
		return 0, fmt.Errorf("EVALHOST_DAEMON_MAX_SESSIONS=%q: want a whole number of sessions from 1 to %d (the idle sessions the background process keeps; default %d): set it so, or unset it",
			v, maxDaemonSessions, defaultDaemonSessions)
	}
	return n, nil
}

// daemonCommand starts `evalhost daemon serve` for the same home, and
// the same artifacts directory: a relative PI_ARTIFACTS_DIR names one in
// this command's directory, and the process runs in / (as root it made
// /NAME, and its notices named a file the user could not find). A
// backend given (run's --backend) goes as daemon serve's flag, which wins
// over the environment there as here.
func daemonCommand(home, backend string) func() *exec.Cmd {
	return func() *exec.Cmd {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		args := []string{"daemon", "serve"}
		if backend != "" {
			args = append(args, "--backend", backend)
		}
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		if d := os.Getenv("PI_ARTIFACTS_DIR"); d != "" && !filepath.IsAbs(d) {
			cmd.Env = append(cmd.Env, "PI_ARTIFACTS_DIR="+streamsink.ArtifactsDir(home))
		}
		cmd.Dir = "/" // hold no directory the user may want to remove
		return cmd
	}
}
