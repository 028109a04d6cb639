package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// Ops a client may send, beside serve's eval, cancel, close, sessions,
// job, jobs, wait, stop with a "job" (jobs.go), ping and tool_result.
const (
	OpKill = "kill" // kill the interpreters of the session an eval runs in (a second Ctrl-C)
	OpStop = "stop" // end the background process (with a "job" field: stop that job)
)

// TypeStopping answers stop; the connection closes when the process ends.
// The process also sends it, with "why", to every client still connected
// as it ends (before it cancels their requests), so that a command whose
// cell it interrupts can say why rather than show a Ctrl-C nobody pressed:
// see [Stopping] and [Client.Ending].
const TypeStopping = "stopping"

// Stopping is the line the process sends each client as it ends. Why
// reads after "the background process (pid N) ", as "was stopped
// (evalhost daemon stop, ...) at 2026-11-30 06:00".
type Stopping struct {
	PID  int    `json:"pid"`
	Type string `json:"type"`
	Why  string `json:"why,omitempty"`
}

// MaxLine bounds a request line. It is far above serve's default because
// a run's script (up to 64 MiB) goes in one line, JSON-escaped; the peer
// is the user's own command, and the buffer grows only as a line needs.
// Client.Send refuses a longer line before writing any of it.
const MaxLine = 256 << 20

// conn is one client: its requests, its tool calls and its output.
type conn struct {
	srv   *Server
	id    int
	nc    *net.UnixConn
	enc   *serve.Encoder
	relay *bridge.Relay

	ctx    context.Context // ends when the client leaves or the process stops
	cancel context.CancelFunc

	mu       sync.Mutex
	inflight map[string]*flight
	wg       sync.WaitGroup // its evals
	// stopped are the sessions this client's job control stopped (true)
	// or continued; what is still stopped when it leaves is continued.
	stopped map[sessions.Key]bool
	// queued is closed when the last eval read has taken its place in its
	// session's queue; the next one waits for it, so a client's evals are
	// queued in the order it sent them.
	queued chan struct{}
	// jobsAsked counts the job waits and stops in progress by the job's
	// session (no Python: a job names its session and cwd).
	jobsAsked map[sessions.Key]int
	// ending is set by end: the client has been told the process ends.
	ending bool
}

// flight is an eval that has not sent its end.
type flight struct {
	cancel  context.CancelCauseFunc
	session string
	running atomic.Bool // its first frame came: a cell of it runs
	// jobMu orders job control (jobSignal) with the request's start
	// (stopAsStarted); stopAsked is a Ctrl-Z that came while it was
	// queued, for its start.
	jobMu     sync.Mutex
	stopAsked bool
	key       *sessions.Key // its session's, once queued; under conn.mu
	cwd       string        // its session's directory, as the registry takes it
}

// told is what a client told that the process ends learns of this
// request: that its session's state goes, the session named by its key
// once queued, else by name and directory (no Python, as a job's: see
// toldOf). A request read but not yet queued (a shim's probe may hold it
// there for seconds) counts all the same: after the stopping line it is
// answered, its cells cancelled.
func (fl *flight) told() sessions.Key {
	if fl.key != nil {
		return *fl.key
	}
	return sessions.Key{Session: fl.session, Cwd: fl.cwd}
}

// hello is serve's hello with the settings the process started with
// (Config.Settings), a field a serve client does not read and a process
// that predates it leaves out (Client.Settings is then nil).
type hello struct {
	serve.Hello
	Settings map[string]string `json:"settings,omitempty"`
}

func newConn(s *Server, id int, nc *net.UnixConn) *conn {
	c := &conn{srv: s, id: id, nc: nc, enc: serve.NewEncoder(nc), inflight: map[string]*flight{}, queued: make(chan struct{}),
		jobsAsked: map[sessions.Key]int{}}
	close(c.queued)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.relay = bridge.NewRelay(c.sendToolCall, c.abandonToolCall)
	return c
}

// serve answers the client's lines until it leaves; then its requests are
// cancelled (a client that went away is a Ctrl-C) and awaited.
func (c *conn) serve() {
	defer c.nc.Close()
	c.enc.Line(hello{Hello: serve.Hello{Languages: []string{sessions.LangPython, sessions.LangShell}, PID: os.Getpid(),
		Protocol: serve.Protocol, Type: serve.TypeHello, Version: c.srv.cfg.Version}, Settings: c.srv.cfg.Settings})
	sc := bufio.NewScanner(c.nc)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	for sc.Scan() {
		c.dispatch(sc.Bytes())
	}
	c.continueStopped()
	c.cancel()
	c.relay.Close(errors.New("the command that ran this cell has ended; no one can answer the tool call"))
	c.wg.Wait()
	c.enc.Flush()
}

// end tells the client why the process ends, cancels the client's
// requests and closes the reading side: serve then waits for their end
// lines (the writing side stays open) and returns. told are the keys of
// the sessions of its requests, queued or not yet ([flight.told]), and of
// the jobs it waits for or stops (no Python): the client was told that
// their state goes (Client.Ending). What it reads after (lines it had
// sent) is refused as not run (an eval: the client sends it to the next
// process) or, a job's wait or stop, told as it is refused (Server.addTold).
func (c *conn) end(why string) (told []sessions.Key) {
	c.mu.Lock()
	c.ending = true
	for _, fl := range c.inflight {
		told = append(told, fl.told())
	}
	for key := range c.jobsAsked {
		told = append(told, key)
	}
	c.mu.Unlock()
	c.enc.Line(Stopping{PID: os.Getpid(), Type: TypeStopping, Why: why})
	c.cancel()
	c.nc.CloseRead()
	return told
}

func (c *conn) dispatch(line []byte) {
	op := gjson.GetBytes(line, "op").String()
	id := gjson.GetBytes(line, "id").String()
	if c.jobOp(op, id, line) {
		return
	}
	switch op {
	case "eval":
		c.eval(line, id)
	case "cancel", OpKill:
		fl, key := c.flight(id)
		if fl == nil {
			c.refuse(id, op, fmt.Sprintf("no request %q is queued or running", id))
			return
		}
		fl.cancel(cancelCause(line))
		if op == OpKill && fl.running.Load() && key != nil {
			// Only a request that runs: a queued one would kill the cell
			// of another client's request in its session. Only its own
			// session: the same name in another cwd is another's.
			c.srv.reg.KillSessionIn(key.Session, key.Cwd)
		}
	case OpSignal:
		c.signal(line, id)
	case "tool_result":
		c.toolResult(line)
	case "sessions":
		c.enc.Line(serve.Sessions{ID: id, Sessions: c.srv.reg.Sessions(), Type: serve.TypeSessions})
	case "close":
		name := gjson.GetBytes(line, "session").String()
		cwd := fsField(line, "cwd") // "": every cwd
		if cwd != "" {
			cwd, _ = filepath.Abs(cwd) // as the registry takes it
		}
		existed := c.srv.reg.CloseSessionIn(name, cwd)
		_ = c.srv.state.forget(name, cwd)
		c.enc.Line(serve.Closed{Existed: existed, ID: id, Session: name, Type: serve.TypeClosed})
	case "ping":
		c.enc.Line(serve.Pong{ID: id, Type: serve.TypePong})
	case OpStop:
		how := "was stopped (evalhost daemon stop, or a command of another build replacing it)"
		if gjson.GetBytes(line, "ifIdle").Bool() {
			if busy := c.srv.stopIfIdle(c, how); busy != "" {
				c.refuse(id, op, busy)
				return
			}
		} else {
			c.srv.stop(how)
		}
		c.enc.Line(Stopping{PID: os.Getpid(), Type: TypeStopping})
	default:
		c.refuse(id, op, fmt.Sprintf("unknown op %q; one of eval, cancel, kill, signal, tool_result, sessions, close, job, jobs, wait, ping, stop", op))
	}
}

// flight is request id of this client's in flight (nil: none) and its
// session's key (nil until it is queued).
func (c *conn) flight(id string) (*flight, *sessions.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fl := c.inflight[id]
	if fl == nil {
		return nil, nil
	}
	return fl, fl.key
}

// cancelCause is how a cancel asks to interrupt the cell: "wait" for it
// to stop as it takes its interrupt (backend.ErrInterruptWait: a run's
// Ctrl-C, as python3 waits), "alone" the interpreter without its children
// (backend.ErrInterruptAlone: a kill -INT of a run's pid). Nil: neither,
// the grace window's interrupt of the cell's process group.
func cancelCause(line []byte) error {
	var cause error
	if gjson.GetBytes(line, "wait").Bool() {
		cause = backend.ErrInterruptWait
	}
	if gjson.GetBytes(line, "alone").Bool() {
		cause = errors.Join(cause, backend.ErrInterruptAlone)
	}
	return cause
}

func (c *conn) refuse(id, op, msg string) {
	c.enc.Line(serve.RequestError{Error: msg, ID: id, Op: op, Type: serve.TypeRequestError})
}

// eval queues the request in the shared registry, under a name no other
// client's request has, from a goroutine of its own (after the client's
// earlier evals), and streams its replies tagged with the client's id.
func (c *conn) eval(line []byte, id string) {
	req, err := serve.ParseEval(line)
	if err != nil {
		c.refuse(id, "eval", err.Error())
		return
	}
	if py := fsField(line, "python"); py != "" {
		req.Python = py
	}
	// A run's cells are a script's (sessions.Request.Batch): a cell is
	// not run again on a fresh interpreter after a death, as python3's
	// statements are not.
	req.Batch = gjson.GetBytes(line, "batch").Bool()
	out, custom, err := parseOutput(line)
	if err != nil {
		c.refuse(id, "eval", err.Error())
		return
	}
	if custom {
		req.Sink = out.sink(c.srv.cfg.Sessions.Sink)
	}
	ctx, cancel := context.WithCancelCause(c.ctx)
	fl := &flight{cancel: cancel, session: req.Session, cwd: requestCwd(req.Cwd)}
	if fl.session == "" {
		fl.session = "default"
	}
	if refusal := c.takeOff(id, fl); refusal != nil {
		cancel(nil)
		c.enc.Line(refusal)
		return
	}
	done := func() {
		c.mu.Lock()
		delete(c.inflight, id)
		c.mu.Unlock()
		cancel(nil)
	}
	last := len(req.Cells) - 1
	req.ID = runID(c.id, id)
	req.OnCellEnd = func(res sessions.CellResult) { c.enc.CellEnd(id, res, res.Index == last) }
	if out.Passthrough {
		req.Streams = func(cell int, t frames.Type, p []byte) { c.sendBytes(id, cell, t, p, false) }
	}
	// Queued off the reader: Queue resolves the request's interpreter (a
	// shim's probe can take seconds), and the reader must go on answering
	// this client's ping and cancel meanwhile.
	prev, queued := c.queued, make(chan struct{})
	c.queued = queued
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		<-prev
		beforeTaken(c.ctx, "eval", id)
		job, err := c.srv.reg.Queue(req)
		close(queued)
		if err != nil {
			done()
			c.refuse(id, "eval", err.Error())
			return
		}
		key := job.Key()
		c.mu.Lock()
		fl.key = &key
		c.mu.Unlock()
		afterQueue(id)
		_ = c.srv.state.used(fl.session) // best effort: only a crash report reads it
		start := time.Now()
		res, err := job.Run(ctx, c.emitter(id, fl, out.Passthrough))
		// Out of flight before its last line: a request whose client has
		// its end is not one a stop tells (conn.end), nor one that keeps a
		// replacement off (stopIfIdle).
		done()
		if err != nil {
			c.refuse(id, "eval", err.Error())
			return
		}
		c.enc.End(id, res, time.Since(start))
	}()
}

// Test hooks: afterQueue once request id has its place in its session's
// queue; beforeTaken before an eval is queued or a job's wait or stop is
// counted (op, the request's id; ctx ends with the connection's end).
var (
	afterQueue  = func(id string) {}
	beforeTaken = func(ctx context.Context, op, id string) {}
)

// requestCwd is an eval's cwd as the registry makes it absolute (in this
// process's directory: a client sends an absolute one).
func requestCwd(cwd string) string {
	if cwd == "" {
		cwd = "."
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		return abs
	}
	return cwd
}

// takeOff puts fl in flight as request id, or says why not: the id is in
// flight already, or the process is ending. It holds the server's lock
// against stopIfIdle: a request is either in flight when that looks, or
// refused here once the process is ending (nothing of it ran).
func (c *conn) takeOff(id string, fl *flight) any {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	if c.srv.ending() {
		return NotRunError{RequestError: serve.RequestError{Error: "the background process is ending (it " + c.srv.endHow + "); nothing of this request ran: send it again",
			ID: id, Op: "eval", Type: serve.TypeRequestError}, NotRun: true}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.inflight[id]; dup {
		return &serve.RequestError{Error: fmt.Sprintf("request id %q is already in flight; use a new id", id), ID: id, InFlight: true, Op: "eval", Type: serve.TypeRequestError}
	}
	c.inflight[id] = fl
	return nil
}

// NotRunError refuses an eval that came once the process was ending (its
// idle end, a stop): nothing of it ran, so a client may send it to the
// next process ([IsNotRun]).
type NotRunError struct {
	serve.RequestError
	NotRun bool `json:"notRun"`
}

// IsNotRun says whether line is a NotRunError.
func IsNotRun(line []byte) bool {
	return gjson.GetBytes(line, "type").String() == serve.TypeRequestError && gjson.GetBytes(line, "notRun").Bool()
}

// emitter sends a request's frames; with passthrough its stdout and
// stderr frames go as TypeBytes lines, their text unchanged.
func (c *conn) emitter(id string, fl *flight, passthrough bool) sessions.Emit {
	return func(cell int, f frames.Frame) {
		if !fl.running.Swap(true) {
			c.stopAsStarted(fl)
		}
		if passthrough && (f.Type == frames.TypeStdout || f.Type == frames.TypeStderr) {
			c.sendBytes(id, cell, f.Type, []byte(f.Data), true)
			return
		}
		c.enc.Frame(id, cell, &f)
	}
}

func (c *conn) sendBytes(id string, cell int, t frames.Type, p []byte, frame bool) {
	c.enc.RawData(appendBytes(nil, id, cell, t, len(p), frame), p)
}

func (c *conn) sendToolCall(callID string, call bridge.Call) error {
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return c.enc.Line(serve.ToolCall{Type: serve.TypeToolCall, Call: callID, ID: call.Request, Cell: call.Cell,
		Session: call.Session, Name: call.Name, Args: args})
}

func (c *conn) abandonToolCall(callID string) {
	c.enc.Line(serve.ToolCallAbandoned{Call: callID, Type: serve.TypeToolCallAbandoned})
}

func (c *conn) toolResult(line []byte) {
	root := gjson.ParseBytes(line)
	call, ok := root.Get("call").String(), root.Get("ok")
	if call == "" || !ok.IsBool() {
		c.refuse("", "tool_result", `tool_result needs the "call" id of a tool_call and "ok"`)
		return
	}
	var value json.RawMessage
	if v := root.Get("value"); v.Exists() {
		value = json.RawMessage(v.Raw)
	}
	msg := root.Get("error").String()
	if !ok.Bool() && msg == "" {
		msg = "the tool failed without a message"
	}
	if err := c.relay.Resolve(call, ok.Bool(), value, msg); err != nil {
		c.refuse("", "tool_result", fmt.Sprintf("tool_result for call %q: %v", call, err))
	}
}

// fsField is a path field of line, as its bytes (a path need not be UTF-8);
// "" when it is absent.
func fsField(line []byte, name string) string {
	v := gjson.GetBytes(line, name)
	if p, ok := frames.DecodeFSString(v.Raw); ok && v.Type == gjson.String {
		return p
	}
	return v.String()
}
