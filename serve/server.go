package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/handoff"
	"github.com/evalhost/evalhost/internal/owed"
	"github.com/evalhost/evalhost/sessions"
)

// Protocol is the version of docs/serve-protocol.md this package speaks.
const Protocol = "1.10"

// DefaultMaxLine is the longest request line read when Config.MaxLine is 0.
const DefaultMaxLine = 16 << 20

// ErrOutputGone is returned by Serve when the reader of its output left
// (Config.OutputGone) with requests unanswered: their work was ended at
// once, as nobody could read their answers (or an answer's write failed).
var ErrOutputGone = errors.New("serve: the output's reader is gone: the requests unanswered were ended")

// ErrServed is returned by a second call of Serve on one Server.
var ErrServed = errors.New("serve: Serve was already called on this Server; make a new Server per stream")

// Config sets up a Server. Zero values take the documented defaults.
type Config struct {
	// Sessions configures the session registry Serve builds. Serve adds the
	// tool bridge's hooks: EnvHook's variables and RunHook's calls come on
	// top of any set here, which are still called.
	Sessions sessions.Config
	// Version is evalhost's version, for hello.
	Version string
	// Languages are the cell languages that are on, for hello; default py, sh.
	Languages []string
	// Progress is the interval of progress lines for a running cell; 0
	// sends none.
	Progress time.Duration
	// CancelOnStop cancels the requests in flight on shutdown, the end of
	// input and Shutdown, instead of letting them finish.
	CancelOnStop bool
	// DrainJobs lets running jobs (detached cells) end on their own on
	// shutdown, the end of input and Shutdown, after the requests in flight;
	// without it they are stopped, each job_end saying so. The end of
	// Serve's context ends them at once either way.
	DrainJobs bool
	// MaxLine bounds a request line, in bytes; default DefaultMaxLine.
	MaxLine int
	// Trace, when set, sees every frame as the interpreter sent it, before
	// it is written (PI_PYTHON_IPC_TRACE). It is called from many goroutines.
	Trace func(cell int, f frames.Frame)
	// OutputGone, when set, is closed once the reader of Serve's w is gone
	// (the client closed its end): nothing more can be answered, so Serve
	// stops as at the end of its input when every answer was written, and
	// ends the work at once, returning ErrOutputGone, when one was not.
	OutputGone <-chan struct{}
}

// sentReader is a Serve input that can be read up to what its client had
// sent (internal/sentinput): ReadSent makes its Read return what is there
// now, then io.EOF, without waiting; false when it cannot.
type sentReader interface{ ReadSent() bool }

// Server speaks the protocol on one stream. Make one with New, run it with
// Serve; Shutdown and the end of Serve's context stop it.
type Server struct {
	cfg      Config
	served   atomic.Bool
	stopReq  chan struct{} // closed by Shutdown
	stopOnce sync.Once

	// Set up by Serve.
	out    *Encoder
	reg    *sessions.Registry
	relay  *bridge.Relay
	bridge *bridge.Server
	work   context.Context // ends when the work must end at once
	abort  context.CancelFunc

	in      *frames.Reader // request lines: read by one reader at a time (reader.go)
	readEnd chan error     // the first reader to meet the end says why
	quit    chan struct{}  // closed when no request is dispatched any more

	// dispatchMu orders dispatching against stopping: no request is
	// dispatched once stopped is set. sent: the output's reader is gone
	// and what the client had sent is read (readSent): an eval or reset
	// is counted unanswered, not run.
	dispatchMu sync.Mutex
	stopped    bool
	sent       bool

	mu       sync.Mutex
	inflight map[string]*inflight
	jobEnds  map[string]<-chan struct{} // job id -> its request's end written
	wg       sync.WaitGroup             // evals and resets, and the goroutines parked after them
	jobWG    sync.WaitGroup             // waits and stops, ended by the registry's Close
	// answers counts the requests accepted and not answered yet (an
	// answer: the last line about a request, an eval's end, a reset's or
	// a job op's reply, or the request_error instead), the answers being
	// written and the failed, for the verdict when the output's reader
	// goes (internal/owed). The answers written on the reader's goroutine
	// (preempted ops, refusals) are noted only when their write fails:
	// stopDispatch waits for them.
	answers owed.Answers
}

// New makes a Server. Nothing starts until Serve.
func New(cfg Config) *Server {
	if len(cfg.Languages) == 0 {
		cfg.Languages = []string{sessions.LangPython, sessions.LangShell}
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = DefaultMaxLine
	}
	return &Server{cfg: cfg, stopReq: make(chan struct{}), inflight: map[string]*inflight{}, jobEnds: map[string]<-chan struct{}{}}
}

// Shutdown asks Serve to stop as a shutdown request does: it reads no more
// requests, lets those in flight finish (or cancels them, with
// CancelOnStop), then returns. It does not wait; safe to call at any time
// and more than once.
func (s *Server) Shutdown() {
	s.stopOnce.Do(func() { close(s.stopReq) })
}

// errNoAnswer fails tool calls once the server stopped reading requests.
var errNoAnswer = errors.New("evalhost serve stopped reading requests (shutdown or end of stdin), so no tool_result can answer this call")

// Serve reads requests from r and writes replies to w until a shutdown
// request, the end of r, Shutdown, the end of ctx or the reader of w
// leaving (Config.OutputGone), then closes every session and returns.
// After the first three, the requests in flight finish (see CancelOnStop)
// and Serve returns nil, or the error that ended r. When ctx ends, even
// while draining, the work ends at once: every request is cancelled, every
// interpreter killed, each accepted eval still gets its end, and Serve
// returns ctx's cause. When the reader of w leaves, the work ends at once
// too if a request is unanswered, and Serve returns ErrOutputGone (also
// when an answer's write failed); with every answer written it stops as
// at the end of r (an answer being written is waited for: the client may
// have read it whole), and returns nil.
//
// Serve may be called once per Server. When it returns before r ended, one
// goroutine may still be blocked in r.Read; it reads no further and exits
// once that Read returns (close r to end it).
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	if s.served.Swap(true) {
		return ErrServed
	}
	s.start(w)
	_ = s.out.line(Hello{Languages: s.cfg.Languages, PID: os.Getpid(), Protocol: Protocol, Type: TypeHello, Version: s.cfg.Version}, false)
	stopProgress := s.startProgress()
	s.in = frames.NewReader(r, s.cfg.MaxLine)
	s.readEnd = make(chan error, 1)
	s.quit = make(chan struct{})
	go handoff.New(s.readUntilWork, s.quit, &s.wg).Read()
	readErr, why := s.waitStop(ctx)
	if why == stoppedByReaderGone {
		s.readSent(ctx, r)
	}
	s.stopDispatch() // waits for an answer being written by a reader
	aborted := why == stoppedByCtx
	cutShort := why == stoppedByReaderGone && s.answers.CutShort()
	s.stopTaking(aborted || cutShort)
	if aborted || cutShort {
		s.wg.Wait()
	} else {
		aborted, cutShort = s.drain(ctx)
	}
	if !aborted && !cutShort {
		aborted = s.drainJobs(ctx)
	}
	stopProgress()
	s.reg.Close() // stops the jobs still running
	s.jobWG.Wait()
	s.bridge.Close()
	s.abort()
	_ = s.out.Flush()
	switch {
	case aborted:
		return context.Cause(ctx)
	case cutShort || s.answerLost(ctx):
		return ErrOutputGone
	case readErr != nil:
		return fmt.Errorf("serve: reading requests: %w", readErr)
	}
	return nil
}

// readSent reads, once the reader of the output is gone, the requests its
// client had sent by then, when r can tell (sentReader): an eval or reset
// among them counts as unanswered and is not run; another is answered as
// ever, and its answer's write fails. Without it the verdict would go by
// whether the reader or the watch of the output woke first, and a client
// that sent a request and closed both ends was told, one time in a few,
// that nothing was lost.
func (s *Server) readSent(ctx context.Context, r io.Reader) {
	sr, ok := r.(sentReader)
	if !ok {
		return
	}
	s.dispatchMu.Lock()
	s.sent = true
	s.dispatchMu.Unlock()
	if !sr.ReadSent() {
		return
	}
	select {
	case <-s.readEnd: // the reader met the end of what was sent
	case <-ctx.Done():
	}
}

// answerLost reports, once the reader of the output is gone, whether an
// answer was not written (the writes under way are waited for, and the
// end of ctx meanwhile counts as a loss); false while it is there.
func (s *Server) answerLost(ctx context.Context) bool {
	select {
	case <-s.cfg.OutputGone:
		return s.answers.Wait(ctx, s.cfg.OutputGone) != nil
	default:
		return false
	}
}

// start builds the registry and the tool bridge around w.
func (s *Server) start(w io.Writer) {
	s.out = NewEncoder(w)
	s.work, s.abort = context.WithCancel(context.Background())
	s.relay = bridge.NewRelay(s.sendToolCall, s.abandonToolCall)
	s.bridge = bridge.New(s.relay, bridge.Options{})
	cfg := s.cfg.Sessions
	cfg.EnvHook = chainEnv(s.bridge.Env, cfg.EnvHook)
	cfg.RunHook = chainRun(s.runHook, cfg.RunHook)
	cfg.OnJobEnd = chainJobEnd(s.jobEnded, cfg.OnJobEnd)
	s.reg = sessions.New(cfg)
}

// Why the server stopped reading.
const (
	stoppedReading      = iota // the end of r, a shutdown request or Shutdown
	stoppedByCtx               // the end of Serve's context
	stoppedByReaderGone        // Config.OutputGone
)

// waitStop waits until the server must stop reading, and says why;
// readErr is why r ended, when not at EOF.
func (s *Server) waitStop(ctx context.Context) (readErr error, why int) {
	select {
	case err := <-s.readEnd:
		return err, stoppedReading
	case <-s.stopReq:
		return nil, stoppedReading
	case <-ctx.Done():
		return nil, stoppedByCtx
	case <-s.cfg.OutputGone:
		return nil, stoppedByReaderGone
	}
}

// stopTaking runs once the server reads no more requests: no tool_result
// can answer a call now, and a draining cell would otherwise wait for one
// until its timeout. Unless draining, the requests in flight are cancelled.
func (s *Server) stopTaking(aborted bool) {
	s.relay.Close(errNoAnswer)
	switch {
	case aborted:
		s.endAtOnce()
	case s.cfg.CancelOnStop:
		s.cancelAll()
	}
}

// drain waits for the requests in flight; the end of ctx meanwhile ends
// them at once (aborted), and so does the reader of the output leaving
// while one is unanswered (cutShort): nobody can read its answer.
func (s *Server) drain(ctx context.Context) (aborted, cutShort bool) {
	drained := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(drained)
	}()
	gone := s.cfg.OutputGone
	for {
		select {
		case <-drained:
			return false, false
		case <-gone:
			gone = nil
			if s.answers.CutShort() {
				s.endAtOnce()
				<-drained
				return false, true
			}
		case <-ctx.Done():
			s.endAtOnce()
			<-drained
			return true, false
		}
	}
}

// endAtOnce cancels every request and kills every interpreter, without the
// grace an interrupt gets: the requests still end, each with its end line,
// which a client that stopped reading is not waited for past StalledWrite.
func (s *Server) endAtOnce() {
	s.out.BoundWrites(StalledWrite)
	s.abort() // every eval's and reset's context derives from s.work
	s.reg.Kill()
}

func (s *Server) cancelAll() {
	s.mu.Lock()
	cancels := make([]context.CancelFunc, 0, len(s.inflight))
	for _, fl := range s.inflight {
		cancels = append(cancels, fl.cancel)
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// reply writes the answer to a request made on the reader's goroutine (a
// preempted op's, a refusal), noting a failed write.
func (s *Server) reply(v any) { s.answers.Replied(s.out.line(v, false)) }

func (s *Server) requestError(e *requestError) { s.reply(e.reply()) }

// accept counts a request taken, to be answered from another goroutine.
// Accept refuses one only after Wait's verdict on a gone reader
// (answerLost), which comes after stopDispatch: nothing is accepted then.
func (s *Server) accept() { _ = s.answers.Accept() }

// answer writes the answer to a request accept counted.
func (s *Server) answer(v any) {
	written := s.answers.Answering()
	written(s.out.line(v, false))
}

func (s *Server) answerError(e *requestError) { s.answer(e.reply()) }

// notice writes a line that answers no request: a progress line, a tool
// call, a job_end.
func (s *Server) notice(v any) { _ = s.out.line(v, false) }

func chainEnv(first, then func() (map[string]string, error)) func() (map[string]string, error) {
	if then == nil {
		return first
	}
	return func() (map[string]string, error) {
		env, err := first()
		if err != nil {
			return nil, err
		}
		more, err := then()
		if err != nil {
			return nil, err
		}
		for k, v := range more {
			env[k] = v
		}
		return env, nil
	}
}

func chainRun(first, then func(sessions.RunInfo, bool)) func(sessions.RunInfo, bool) {
	if then == nil {
		return first
	}
	return func(run sessions.RunInfo, active bool) {
		first(run, active)
		then(run, active)
	}
}
