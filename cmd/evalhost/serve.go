package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/sentinput"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

func init() { extraCommands["serve"] = serveMain }

type serveFlags struct {
	profile     cpuProfile
	python      string
	maxSessions int
	idle        time.Duration
	progress    time.Duration
	drain       bool
	drainJobs   bool
	maxLine     int
	maxOutput   int
	grace       time.Duration
	ipython     bool
	backendFlags
}

func serveMain(args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	var f serveFlags
	fs := newServeFlagSet(&f)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "evalhost serve: unexpected argument %q; serve reads requests as NDJSON on stdin (docs/serve-protocol.md)\n", fs.Arg(0))
		return exitUsage
	}
	if err := refuseNegative(fs, "max-sessions", "idle-timeout", "progress", "max-line", "max-output", "grace"); err != nil {
		fmt.Fprintf(stderr, "evalhost serve: %v\n", err)
		return exitUsage
	}
	stopProfile, ok := f.profile.start("serve", stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfile()
	home, err := evalhostHome()
	if err != nil {
		fmt.Fprintf(stderr, "evalhost serve: %v\n", err)
		return exitUsage
	}
	starters, err := f.starters(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost serve: %v\n", err)
		return exitUsage
	}
	store, err := serverArtifactStore(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost serve: %v\n", err)
		return exitUsage
	}
	langs, _ := toolMode() // checked when the starters were made
	defer sweepKilledShells()()
	growOutPipe(stdout) // as run's: bulk output does not wait for the client at every 64 KiB
	out, end, restoreOut := watchedOutput(stdout, true)
	srv := serve.New(serve.Config{
		Sessions: sessions.Config{
			Home:        home,
			Starters:    starters,
			Python:      f.python,
			MaxSessions: f.maxSessions,
			IdleTimeout: f.idle,
			Grace:       f.grace,
			IPython:     f.ipython,
			Sink: streamsink.Options{MaxBytes: f.maxOutput,
				Store: store},
		},
		Version:      version,
		Languages:    langs,
		Progress:     f.progress,
		CancelOnStop: !f.drain,
		DrainJobs:    f.drainJobs,
		MaxLine:      f.maxLine,
		Trace:        ipcTraceFunc(logger),
		// The client closed its end of stdout: the work ends at once, as at
		// a second signal, if a request is unanswered; else as at the end
		// of stdin.
		OutputGone: end.watch.Gone(),
	})
	defer catchSIGPIPE()() // a closed stdout (or stderr) is an error, not a death
	ctx, stopSignals := serveSignals(srv, logger)
	in, restoreIn := pollableInput(stdin)
	ctx, stopFailed := stdoutFailedContext(ctx, end)
	// Once stdout's reader is gone, the requests the client had sent are
	// read, so a request it sent counts as unanswered.
	err = srv.Serve(ctx, sentinput.New(in), out)
	stopFailed()
	restoreIn()
	restoreOut()
	stopSignals()
	if failed := end.failure(); failed != nil && !errors.Is(err, errSecondSignal) {
		err = failed // it may have ended at the end of its input first
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errSecondSignal):
		return exitInterrupted
	case errors.Is(err, serve.ErrOutputGone):
		fmt.Fprintf(stderr, "evalhost serve: %v; ended the requests in flight and closed every session\n", errOutputClosed)
		return exitOutputClosed
	case errors.As(err, new(*outputFailedError)):
		fmt.Fprintf(stderr, "evalhost serve: %v; no answer could reach the client, so it ended the requests in flight and closed every session\n", err)
		return exitFailed
	default:
		logger.Error("serve stopped", "err", err)
		return exitFailed
	}
}

// newServeFlagSet is serve's flags, read into f.
func newServeFlagSet(f *serveFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: evalhost serve [flags]\n\nSpeaks NDJSON on stdin/stdout (docs/serve-protocol.md, version %s).\n\nFlags:\n%s", serve.Protocol, fs.FlagUsages())
	}
	fs.StringVar(&f.python, "python", "", "python interpreter (default: resolved per cwd: venv, then python3 on PATH)")
	fs.IntVar(&f.maxSessions, "max-sessions", 4, "live sessions before the least recently used idle one is closed")
	fs.DurationVar(&f.idle, "idle-timeout", 5*time.Minute, "close sessions idle this long")
	fs.DurationVar(&f.progress, "progress", 5*time.Second, "interval of progress lines for a running cell (0 disables)")
	fs.BoolVar(&f.drain, "drain", true, "on stdin EOF, shutdown, SIGTERM or SIGINT, let in-flight requests finish (false cancels them); a second signal ends them at once")
	fs.BoolVar(&f.drainJobs, "drain-jobs", false, "on stdin EOF, shutdown or the first signal, let running jobs (detached cells) end on their own instead of stopping them")
	fs.IntVar(&f.maxLine, "max-line", serve.DefaultMaxLine, "longest request line accepted, in bytes")
	fs.IntVar(&f.maxOutput, "max-output", 0, "bytes of output kept in each cell_end's tail (default 50 KiB)")
	fs.DurationVar(&f.grace, "grace", 2*time.Second, "interrupt grace before an interpreter is killed")
	f.backendFlags.register(fs)
	fs.BoolVar(&f.ipython, "ipython", false, "run every session's Python cells through IPython (a request's \"ipython\" field chooses per session)")
	f.profile.register(fs)
	return fs
}

// errSecondSignal is why serve's work ended at once.
var errSecondSignal = errors.New("a second signal ended the work at once")

// serveSignals turns SIGTERM, SIGINT and SIGHUP into a shutdown: serve reads
// no more requests and drains the ones in flight (a terminal's Ctrl-C must
// not orphan interpreters or leave requests without their end). A second
// signal ends the work at once. stop ends the handling and waits for it.
func serveSignals(srv *serve.Server, logger *slog.Logger) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	quit := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for n := 1; ; n++ {
			select {
			case sig := <-sigs:
				// What the signal does comes first: its log line may
				// wait for a client that reads slowly (socketStderr).
				if n == 1 {
					srv.Shutdown()
					logger.Info("stopping on signal: draining requests in flight; a second signal ends them at once", "signal", sig)
				} else {
					cancel(errSecondSignal)
					logger.Warn("second signal: ending every request at once", "signal", sig)
				}
			case <-quit:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(quit)
		<-exited
		cancel(nil)
	}
}

// ipcTraceFunc is PI_PYTHON_IPC_TRACE's frame log for serve, nil when off.
func ipcTraceFunc(logger *slog.Logger) func(cell int, f frames.Frame) {
	if !ipcTraceOn() {
		return nil
	}
	return ipcTrace(logger, func(int, frames.Frame) {})
}
