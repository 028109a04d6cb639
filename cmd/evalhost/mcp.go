package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/internal/sentinput"
	"github.com/evalhost/evalhost/mcp"
	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

func init() { extraCommands["mcp"] = mcpMain }

type mcpFlags struct {
	python      string
	maxSessions int
	idle        time.Duration
	maxOutput   int
	grace       time.Duration
	ipython     bool
	tools       []string
	http        string
	token       string
	maxLine     int
	httpIdle    time.Duration
	profile     cpuProfile
	backendFlags
}

// newMCPFlagSet is mcp's flags, read into f.
func newMCPFlagSet(f *mcpFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("mcp", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: evalhost mcp [flags]\n\nServes the eval, session and notebook tools over the Model Context Protocol:\n"+
			"on stdin/stdout by default, or streamable HTTP on a loopback address with --http (docs/mcp.md).\n\nFlags:\n%s", fs.FlagUsages())
	}
	fs.StringVar(&f.python, "python", "", "python interpreter (default: resolved per cwd: venv, then python3 on PATH)")
	fs.IntVar(&f.maxSessions, "max-sessions", 4, "live sessions before the least recently used idle one is closed")
	fs.DurationVar(&f.idle, "idle-timeout", 5*time.Minute, "close sessions idle this long")
	fs.IntVar(&f.maxOutput, "max-output", 16<<10, "bytes of each cell's output tail shown to the model (the rest is an artifact:// resource)")
	fs.DurationVar(&f.grace, "grace", 2*time.Second, "interrupt grace before an interpreter is killed")
	fs.BoolVar(&f.ipython, "ipython", false, "run Python cells through IPython (full magics)")
	repeatedVarP(fs, &f.tools, "tool", "", "NAME=COMMAND: cells call tool.NAME(**args); COMMAND gets the args as JSON on stdin, its stdout is the value (repeatable)")
	fs.StringVar(&f.http, "http", "", "serve streamable HTTP on this loopback HOST:PORT instead of stdio (e.g. 127.0.0.1:8765)")
	fs.StringVar(&f.token, "token", "", "bearer token for --http (default: $EVALHOST_MCP_TOKEN, else a random one printed to stderr)")
	fs.DurationVar(&f.httpIdle, "http-session-timeout", mcp.DefaultHTTPSessionTimeout,
		"end an MCP session of --http whose client has no request or GET stream open this long (its calls cancelled, as at a DELETE); 0: never")
	fs.IntVar(&f.maxLine, "max-line", mcp.DefaultMaxLine, "longest stdio message accepted, in bytes (a longer request gets an error)")
	f.backendFlags.register(fs)
	f.profile.register(fs)
	return fs
}

func mcpMain(args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	var f mcpFlags
	fs := newMCPFlagSet(&f)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "evalhost mcp: unexpected argument %q; see evalhost mcp --help\n", fs.Arg(0))
		return exitUsage
	}
	if err := refuseNegative(fs, "max-sessions", "idle-timeout", "max-line", "max-output", "grace", "http-session-timeout"); err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitUsage
	}
	if err := refuseOtherTransportFlags(fs, f.http != ""); err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitUsage
	}
	tools, err := parseToolFlags(f.tools)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitUsage
	}
	stopProfile, ok := f.profile.start("mcp", stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfile()
	home, err := evalhostHome()
	if err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitUsage
	}
	starters, err := f.starters(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitUsage
	}
	store, err := serverArtifactStore(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitUsage
	}
	toolServer := bridge.New(bridge.CommandTools(tools), bridge.Options{})
	defer toolServer.Close()
	defer sweepKilledShells()()
	reg := sessions.New(sessions.Config{Home: home, Starters: starters, Python: f.python, MaxSessions: f.maxSessions,
		IdleTimeout: f.idle, Grace: f.grace, IPython: f.ipython,
		Sink:    streamsink.Options{MaxBytes: f.maxOutput, Store: store},
		EnvHook: toolServer.Env,
		RunHook: func(run sessions.RunInfo, active bool) { toolServer.RunHook(run.Session, run.Run, active) },
	})
	defer reg.Close()
	httpIdle := f.httpIdle
	if httpIdle == 0 {
		httpIdle = -1 // never
	}
	srv, err := mcp.New(mcp.Config{Registry: reg, Store: store, RunNotebook: f.notebookRunner(), Version: version,
		Logger: logger, ToolNames: slices.Sorted(maps.Keys(tools)), HTTPSessionTimeout: httpIdle})
	if err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if f.http != "" {
		return serveMCPHTTP(ctx, srv, f, stderr)
	}
	defer catchSIGPIPE()() // a closed stdout (or stderr) is an error, not a death
	in, restoreIn := pollableInput(stdin)
	defer restoreIn()
	growOutPipe(stdout) // a large result is one write, not one per 64 KiB taken
	out, end := mcpStdout(stdout)
	defer out.Close()
	// A write to stdout that failed (not for want of a reader) cancels the
	// calls, as a signal does. The client's closing its end is RunStdio's
	// to see: it ends the server, with ErrOutputGone only when calls were
	// cut short (a client that read every answer and closed both ends, in
	// either order, ended it normally: it exited 141 saying it "cancelled
	// the calls in flight", though none was).
	ctx, stopFailed := stdoutFailedContext(ctx, end)
	defer stopFailed()
	// Once stdout's reader is gone, the calls the client had sent are
	// read, so a call it sent counts as unanswered.
	err = srv.RunStdio(ctx, sentinput.New(in), out, f.maxLine)
	if errors.Is(err, mcp.ErrOutputGone) {
		_ = reg.Close() // the sessions go before the exit says so
		fmt.Fprintf(stderr, "evalhost mcp: %v; cancelled the calls in flight and closed every session\n", errOutputClosed)
		return exitOutputClosed
	}
	if failed := end.failure(); failed != nil {
		_ = reg.Close()
		fmt.Fprintf(stderr, "evalhost mcp: %v; no answer could reach the client, so it cancelled the calls in flight and closed every session\n", failed)
		return exitFailed
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		logger.Warn("mcp session ended", "err", err)
	}
	return exitOK
}

// refuseOtherTransportFlags refuses a flag of the transport mcp does not
// serve: --token and --http-session-timeout are HTTP's, --max-line is
// stdio's (an HTTP request's body has its own bound). Given with the other
// transport, each was silently ignored: a user who set a token believed
// the server guarded by it.
func refuseOtherTransportFlags(fs *pflag.FlagSet, http bool) error {
	if !http {
		for _, name := range []string{"token", "http-session-timeout"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies only to the HTTP transport; add --http ADDR, or drop it", name)
			}
		}
		return nil
	}
	if fs.Changed("max-line") {
		return fmt.Errorf("--max-line applies only to the stdio transport (over --http a request's body is bounded at %d MiB); drop it, or drop --http", mcp.DefaultMaxLine>>20)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpStdout is stdout as the MCP server writes it (stdioOut for a file),
// and how it ends (watchedOutput; nil for another writer).
func mcpStdout(stdout io.Writer) (io.WriteCloser, *outputEnd) {
	file, ok := stdout.(*os.File)
	if !ok {
		return nopWriteCloser{stdout}, nil
	}
	polled, end, restore := watchedOutput(file, false) // RunStdio watches the reader
	return stdioOut{Writer: polled, file: file, close: sync.OnceFunc(restore)}, end
}

// stdioOut is stdout for the MCP server. A pipe is written through a
// private non-blocking open of it (pollableOutput), which Close closes:
// that ends a write a client that stopped reading holds up, so a SIGTERM
// still ends the server (it hung there); descriptor 1 stays open. Its
// SyscallConn, descriptor 1's, lets the server see that the client closed
// its end.
type stdioOut struct {
	io.Writer
	file  *os.File
	close func()
}

func (o stdioOut) Close() error {
	o.close()
	return nil
}

func (o stdioOut) SyscallConn() (syscall.RawConn, error) { return o.file.SyscallConn() }

// parseToolFlags reads --tool NAME=COMMAND flags (run, mcp), refusing a
// malformed one or a name given twice.
func parseToolFlags(specs []string) (map[string]string, error) {
	tools := map[string]string{}
	for _, spec := range specs {
		name, command, err := bridge.ParseToolFlag(spec)
		if err != nil {
			return nil, err
		}
		if _, dup := tools[name]; dup {
			return nil, fmt.Errorf("--tool %s is given twice; give each tool once", name)
		}
		tools[name] = command
	}
	return tools, nil
}

func serveMCPHTTP(ctx context.Context, srv *mcp.Server, f mcpFlags, stderr io.Writer) int {
	token := f.token
	if token == "" {
		token = os.Getenv("EVALHOST_MCP_TOKEN")
	}
	generated := token == ""
	if generated {
		token = mcp.NewToken()
	}
	handler, err := srv.HTTPHandler(token)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: the token (--token or EVALHOST_MCP_TOKEN): %v; use a long random one, or none to have one generated\n", err)
		return exitUsage
	}
	ln, err := mcp.ListenLoopback(f.http)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitUsage
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "evalhost mcp: listening on http://%s/\n", ln.Addr())
	if generated {
		fmt.Fprintf(stderr, "evalhost mcp: token %s\n", token)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-errc:
		fmt.Fprintf(stderr, "evalhost mcp: %v\n", err)
		return exitFailed
	}
	// Close, not Shutdown: a client's event stream stays open as long as
	// its session, so a drain would wait for every client to leave. Closed
	// connections cancel their calls, which stop their cells.
	hs.Close()
	<-errc
	return exitOK
}

// notebookRunner runs notebook_run's cells as nb run does (a registry of
// its own, so images stay inline and text as the cell wrote it, as Jupyter
// writes them; the call's result still shows sanitised text), cancelled with the
// call, and writes the notebook in place under its lock, refusing to undo
// an edit made while the cells ran.
func (f mcpFlags) notebookRunner() mcp.NotebookRunner {
	return func(ctx context.Context, req mcp.NotebookRunRequest) (mcp.NotebookRunResult, error) {
		nb, err := notebook.Load(req.Path)
		if err != nil {
			return mcp.NotebookRunResult{}, err
		}
		if err := nbrun.CheckLanguage(nb); err != nil {
			return mcp.NotebookRunResult{}, fmt.Errorf("%s: %w", req.Path, err)
		}
		spec := make([]string, len(req.Cells))
		for i, c := range req.Cells {
			spec[i] = strconv.Itoa(c)
		}
		selected, err := nbrun.SelectCodeCells(nb, strings.Join(spec, ","))
		if err != nil {
			return mcp.NotebookRunResult{}, errors.New(`"cells" ` + err.Error())
		}
		// Refused before any cell runs: outputs run first and then not
		// written would be lost.
		if err := lockedSave(req.Path, finalLockWait, notebook.CheckWritable); err != nil {
			return mcp.NotebookRunResult{}, fmt.Errorf("%w; no cell was run", err)
		}
		home, err := config.Home()
		if err != nil {
			return mcp.NotebookRunResult{}, err
		}
		starters, err := config.Starters(home, f.choice())
		if err != nil {
			return mcp.NotebookRunResult{}, err
		}
		store, err := config.ArtifactStore(home)
		if err != nil {
			return mcp.NotebookRunResult{}, err
		}
		reg := sessions.New(sessions.Config{Home: home, Starters: starters, Python: f.python,
			Sink: streamsink.Options{InlineLimit: -1, Verbatim: true, Store: store}})
		defer reg.Close()
		res, err := nbrun.Run(ctx, reg, nb, nbrun.Options{Cells: selected, Session: "nb:" + req.Path, Cwd: filepath.Dir(req.Path),
			Timeout: req.Timeout, AllowErrors: req.AllowErrors, IPython: f.ipython})
		if err != nil {
			return mcp.NotebookRunResult{}, err
		}
		return saveRun(nb, req.Path, mcp.NotebookRunResult{Result: res.Result, Cells: selected}), nil
	}
}

// saveRun writes the executed notebook back as nb run --inplace does: to
// FILE.nbconvert.ipynb when the notebook changed on disk while the cells
// ran, to the temp directory when neither could be written. The cells'
// results are returned whatever happened, saying where the outputs went.
// The save is not the call's: a cancelled call still saves what ran.
func saveRun(nb *notebook.Notebook, path string, run mcp.NotebookRunResult) mcp.NotebookRunResult {
	saver := newNotebookSaver(path, "", true)
	err := saver.finish(nb)
	switch {
	case err != nil:
		run.NotSaved = err
		if name, rerr := saver.rescueFile(nb); rerr == nil {
			run.Output = name
		}
	case saver.changed != "":
		run.Output = saver.written()
		run.NotSaved = errors.New(saver.changeSaid())
	default:
		run.Output = saver.written()
	}
	return run
}
