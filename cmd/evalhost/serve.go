package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// serveProtocol is the version of docs/serve-protocol.md this speaks.
const serveProtocol = "1.1"

func init() { extraCommands["serve"] = serveMain }

type serveFlags struct {
	python      string
	maxSessions int
	idle        time.Duration
	progress    time.Duration
	drain       bool
	maxLine     int
	maxOutput   int
	grace       time.Duration
	ipython     bool
	backendFlags
}

func serveMain(args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int {
	var f serveFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: evalhost serve [flags]\n\nSpeaks NDJSON on stdin/stdout (docs/serve-protocol.md, version %s).\n\nFlags:\n%s", serveProtocol, fs.FlagUsages())
	}
	fs.StringVar(&f.python, "python", "", "python interpreter (default: resolved per cwd: venv, then python3 on PATH)")
	fs.IntVar(&f.maxSessions, "max-sessions", 4, "live sessions before the least recently used idle one is closed")
	fs.DurationVar(&f.idle, "idle-timeout", 5*time.Minute, "close sessions idle this long")
	fs.DurationVar(&f.progress, "progress", 5*time.Second, "interval of progress lines for a running cell (0 disables)")
	fs.BoolVar(&f.drain, "drain", true, "on stdin EOF, shutdown or SIGTERM, let in-flight requests finish (false cancels them)")
	fs.IntVar(&f.maxLine, "max-line", 16<<20, "longest request line accepted, in bytes")
	fs.IntVar(&f.maxOutput, "max-output", 0, "bytes of output kept in each cell_end's tail (default 50 KiB)")
	fs.DurationVar(&f.grace, "grace", 2*time.Second, "interrupt grace before an interpreter is killed")
	f.backendFlags.register(fs)
	fs.BoolVar(&f.ipython, "ipython", false, "run every session's Python cells through IPython (a request's \"ipython\" field chooses per session)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "evalhost serve: unexpected argument %q; serve reads requests as NDJSON on stdin (docs/serve-protocol.md)\n", fs.Arg(0))
		return exitUsage
	}
	home := evalhostHome()
	starters, err := f.starters(home)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost serve: %v\n", err)
		return exitUsage
	}
	srv := newServer(stdout, sessions.Config{
		Home:        home,
		Starters:    starters,
		Python:      f.python,
		MaxSessions: f.maxSessions,
		IdleTimeout: f.idle,
		Grace:       f.grace,
		IPython:     f.ipython,
		Sink: streamsink.Options{MaxBytes: f.maxOutput,
			Store: artifactStore(home)},
	}, f, logger)
	return srv.serve(stdin)
}

// server is one `evalhost serve`: a reader loop that dispatches requests,
// a goroutine per eval, and one writer that keeps every line whole.
type server struct {
	out    *lineWriter
	tools  *serveTools
	reg    *sessions.Registry
	flags  serveFlags
	logger *slog.Logger

	mu       sync.Mutex
	inflight map[string]*inflight
	wg       sync.WaitGroup // evals, progress ticker
	stopping bool
}

// inflight is an eval request that has not sent its end line yet.
type inflight struct {
	cancel    context.CancelFunc
	cell      int       // the running cell, -1 while queued
	cellStart time.Time // when it started
}

func newServer(w io.Writer, cfg sessions.Config, f serveFlags, logger *slog.Logger) *server {
	out := &lineWriter{w: w}
	tools := newServeTools(out)
	cfg.RunHook = tools.runHook
	cfg.EnvHook = tools.server.Env
	return &server{out: out, tools: tools, reg: sessions.New(cfg), flags: f, logger: logger,
		inflight: map[string]*inflight{}}
}

func (s *server) serve(stdin io.Reader) int {
	langs, _ := toolMode() // checked when the starters were made
	s.out.object(map[string]any{"type": "hello", "protocol": serveProtocol, "version": version, "pid": os.Getpid(), "languages": langs})
	stopTicker := s.startProgress()
	lines := make(chan readResult)
	// The reader is the one goroutine not waited for: it may sit in a read
	// of stdin that never returns, and the process exits after serve.
	go readLines(frames.NewReader(stdin, s.flags.maxLine), lines)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
loop:
	for {
		select {
		case r, ok := <-lines:
			if !ok {
				break loop
			}
			if r.err != nil {
				s.requestError(&requestError{id: idOfPrefix(r.err.Line), line: r.err.Line,
					msg: fmt.Sprintf("line longer than --max-line (%d bytes); split the request or raise the limit", s.flags.maxLine)})
				continue
			}
			if s.handle(r.line) {
				break loop
			}
		case sig := <-sigs:
			s.logger.Info("stopping on signal", "signal", sig)
			break loop
		}
	}
	s.shutdown()
	stopTicker()
	s.wg.Wait()
	s.reg.Close()
	s.tools.server.Close()
	return exitOK
}

type readResult struct {
	line []byte
	err  *frames.ProtocolError
}

// readLines feeds request lines to the loop until stdin ends; an over-long
// line is reported and reading goes on.
func readLines(r *frames.Reader, out chan<- readResult) {
	defer close(out)
	for {
		line, err := r.Line()
		var pe *frames.ProtocolError
		switch {
		case errors.As(err, &pe):
			out <- readResult{err: pe}
		case err != nil:
			return
		default:
			out <- readResult{line: append([]byte(nil), line...)}
		}
	}
}

// idOfPrefix reads a request's "id" from the start of a line too long to
// read whole, so the client learns which request was refused instead of
// waiting for its end. An id cut off by the prefix's end is not guessed.
func idOfPrefix(prefix string) string {
	v := gjson.Get(prefix, "id")
	if v.Type != gjson.String || len(v.Raw) < 2 || !strings.HasSuffix(v.Raw, `"`) || v.Index <= 0 || v.Index+len(v.Raw) >= len(prefix) {
		return ""
	}
	return v.Str
}

// handle dispatches one line; it reports whether the server should stop.
func (s *server) handle(line []byte) (stop bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	if !gjson.ValidBytes(line) {
		s.requestError(&requestError{msg: "not valid JSON", line: quoteLine(line)})
		return false
	}
	root := gjson.ParseBytes(line)
	if !root.IsObject() {
		s.requestError(&requestError{msg: "a request must be a JSON object with an \"op\"", line: quoteLine(line)})
		return false
	}
	op := root.Get("op")
	if op.Type != gjson.String {
		s.requestError(badRequest(root, `missing "op"; one of eval, cancel, reset, close, sessions, ping, shutdown, tool_result`))
		return false
	}
	switch op.Str {
	case "eval":
		s.eval(root)
	case "cancel":
		s.cancelRequest(root)
	case "reset":
		s.reset(root)
	case "close":
		s.closeSession(root)
	case "sessions":
		s.out.object(map[string]any{"type": "sessions", "id": root.Get("id").String(), "sessions": s.reg.Sessions()})
	case "ping":
		s.out.object(map[string]any{"type": "pong", "id": root.Get("id").String()})
	case "shutdown":
		return true
	case "tool_result":
		s.toolResult(root)
	default:
		s.requestError(badRequest(root, "unknown op %q; one of eval, cancel, reset, close, sessions, ping, shutdown, tool_result", op.Str))
	}
	return false
}

func (s *server) requestError(e *requestError) {
	m := map[string]any{"type": "request_error", "error": e.msg}
	if e.id != "" {
		m["id"] = e.id
	}
	if e.line != "" {
		m["line"] = e.line
	}
	s.out.object(m)
}

func (s *server) eval(root gjson.Result) {
	req, perr := parseEval(root)
	if perr != nil {
		s.requestError(perr)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		cancel()
		s.requestError(&requestError{id: req.ID, msg: "the server is shutting down"})
		return
	}
	if _, dup := s.inflight[req.ID]; dup {
		s.mu.Unlock()
		cancel()
		s.requestError(&requestError{id: req.ID, msg: fmt.Sprintf("request id %q is already in flight; use a new id", req.ID)})
		return
	}
	fl := &inflight{cancel: cancel, cell: -1}
	s.inflight[req.ID] = fl
	s.mu.Unlock()
	id := req.ID
	lastCell := len(req.Cells) - 1
	req.OnCellEnd = func(res sessions.CellResult) { s.cellEnd(id, res, res.Index == lastCell) }
	// Queue now, in the reader's order, so one session's requests run in the
	// order they arrived; only running them happens in the background.
	job, err := s.reg.Queue(req)
	if err != nil {
		s.finish(id)
		cancel()
		s.requestError(&requestError{id: id, msg: err.Error()})
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		start := time.Now()
		emit := func(cell int, f frames.Frame) { s.frame(id, fl, cell, f) }
		res, err := job.Run(ctx, ipcTrace(s.logger, emit))
		s.finish(id)
		if err != nil {
			s.requestError(&requestError{id: id, msg: err.Error()})
			return
		}
		s.out.object(map[string]any{"type": "end", "id": id, "status": res.Status, "failedCell": res.FailedCell,
			"durationMs": float64(time.Since(start).Microseconds()) / 1000})
	}()
}

func (s *server) frame(id string, fl *inflight, cell int, f frames.Frame) {
	if f.Type == frames.TypeStarted {
		s.mu.Lock()
		fl.cell, fl.cellStart = cell, time.Now()
		s.mu.Unlock()
	}
	f.ID = id
	s.out.frame(cell, &f)
}

func (s *server) cellEnd(id string, res sessions.CellResult, last bool) {
	s.mu.Lock()
	if fl := s.inflight[id]; fl != nil {
		fl.cell = -1
	}
	s.mu.Unlock()
	// The last cell's cell_end is followed at once by the request's end.
	s.out.objectHeld(struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		sessions.CellResult
	}{"cell_end", id, res}, last)
}

func (s *server) finish(id string) {
	s.mu.Lock()
	delete(s.inflight, id)
	s.mu.Unlock()
}

func (s *server) cancelRequest(root gjson.Result) {
	var id string
	if e := stringField(root, "id", true, &id); e != nil {
		s.requestError(e)
		return
	}
	s.mu.Lock()
	fl := s.inflight[id]
	s.mu.Unlock()
	if fl == nil {
		s.requestError(&requestError{id: id, msg: fmt.Sprintf("no request %q is queued or running", id)})
		return
	}
	fl.cancel()
}

func (s *server) reset(root gjson.Result) {
	var id, session, cwd string
	for _, f := range []struct {
		name     string
		required bool
		dst      *string
	}{{"id", false, &id}, {"session", true, &session}, {"cwd", false, &cwd}} {
		if e := stringField(root, f.name, f.required, f.dst); e != nil {
			s.requestError(e)
			return
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		existed, err := s.reg.ResetSession(context.Background(), session, cwd)
		if err != nil {
			s.requestError(&requestError{id: id, msg: "reset failed: " + err.Error()})
			return
		}
		s.out.object(map[string]any{"type": "reset", "id": id, "session": session, "ok": true, "existed": existed})
	}()
}

func (s *server) closeSession(root gjson.Result) {
	var id, session string
	if e := stringField(root, "session", true, &session); e != nil {
		s.requestError(e)
		return
	}
	_ = stringField(root, "id", false, &id)
	existed := s.reg.CloseSession(session)
	s.out.object(map[string]any{"type": "closed", "id": id, "session": session, "existed": existed})
}

// shutdown stops taking requests and, unless draining, cancels the ones in
// flight; the caller then waits for them.
func (s *server) shutdown() {
	s.mu.Lock()
	s.stopping = true
	var cancels []context.CancelFunc
	for _, fl := range s.inflight {
		cancels = append(cancels, fl.cancel)
	}
	s.mu.Unlock()
	s.tools.stop()
	if !s.flags.drain {
		for _, c := range cancels {
			c()
		}
	}
}

// startProgress sends a progress line for every running cell each interval.
func (s *server) startProgress() (stop func()) {
	if s.flags.progress <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.flags.progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				s.progress(now)
			}
		}
	}()
	return func() { close(done) }
}

func (s *server) progress(now time.Time) {
	type tick struct {
		id   string
		cell int
		ms   int64
	}
	var ticks []tick
	s.mu.Lock()
	for id, fl := range s.inflight {
		if fl.cell >= 0 {
			ticks = append(ticks, tick{id, fl.cell, now.Sub(fl.cellStart).Milliseconds()})
		}
	}
	s.mu.Unlock()
	for _, t := range ticks {
		s.out.object(map[string]any{"type": "progress", "id": t.id, "cell": t.cell, "elapsedMs": t.ms})
	}
}

func (s *server) toolResult(root gjson.Result) {
	if e := s.tools.resolve(root); e != nil {
		s.requestError(e)
	}
}
