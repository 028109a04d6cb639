package sessions

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/runner"
)

// session is one (id, cwd, interpreter) with an executor per language. Its
// requests run one at a time in the order they were queued.
type session struct {
	reg    *Registry
	key    Key
	python Interpreter
	dir    cwdID // the directory key.Cwd was when the session began

	mu        sync.Mutex
	execs     map[string]Executor
	tail      chan struct{} // closed when the last queued request releases its turn
	queued    int           // requests queued or running
	lastUsed  time.Time
	resetting bool
	closed    bool
	retired   bool // out of the registry's map: closed once its queue is empty (retire.go)
	// job is the detached cell running in the session, which holds its
	// turn; detached is closed when one detaches, so requests queued behind
	// it are refused instead of waiting for it (a new one per job).
	job      *detachedJob
	detached chan struct{}
	// epoch counts losses and starts after pending ones; losses holds
	// each language's last; ever the languages that had an interpreter
	// (statelost.go).
	epoch  uint64
	losses map[string]langLoss
	ever   map[string]bool
	// unset holds the languages whose interpreter's first cell could not
	// apply the session's cwd (backend.IsSetupError): the next cell sends it
	// again, rather than run where the interpreter happened to start.
	unset map[string]bool
	// gotEnv is what each language's interpreter got of the variables a
	// request's Environ is compared on (cmdenv.go).
	gotEnv map[string]envPicks
	// deadline is the running cell's time limit, in deadlineLang;
	// suspended: Suspend stopped the Python interpreter (at suspendedAt),
	// and Resume has not continued it; stoppedBefore is how long the
	// suspensions before it lasted (signal.go).
	deadline      *runDeadline
	deadlineLang  string
	suspended     bool
	suspendedAt   time.Time
	stoppedBefore time.Duration
	// stopRun cancels the request holding the turn, for a close
	// (closerun.go).
	stopRun context.CancelCauseFunc
}

// takeUnset says whether lang's interpreter still lacks the session's cwd,
// and forgets it: the cell about to be sent carries it.
func (s *session) takeUnset(lang string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.unset[lang]
	delete(s.unset, lang)
	return was
}

// markUnset notes that lang's interpreter did not take the cwd it was sent.
func (s *session) markUnset(lang string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unset == nil {
		s.unset = map[string]bool{}
	}
	s.unset[lang] = true
}

func newSession(r *Registry, key Key, py Interpreter) *session {
	done := make(chan struct{})
	close(done)
	return &session{reg: r, key: key, python: py, execs: map[string]Executor{}, tail: done, lastUsed: time.Now(),
		detached: make(chan struct{}), losses: map[string]langLoss{}, ever: map[string]bool{}}
}

// turn is a place in a session's queue.
type turn struct {
	s          *session
	prev, mine chan struct{}
	detached   chan struct{} // the session's when the turn was taken
	once       sync.Once
	// epoch is the session's when the turn was taken: the request is told
	// of the losses after it; langs holds what it learnt since (statelost.go).
	epoch uint64
	langs []langSeen
}

// enqueue takes the next place in the queue without blocking, so callers that
// enqueue in arrival order run in arrival order.
func (s *session) enqueue() (*turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrSessionClosed
	}
	if s.job != nil {
		return nil, &SessionBusyError{Session: s.key.Session, Job: s.job.id}
	}
	t := &turn{s: s, prev: s.tail, mine: make(chan struct{}), detached: s.detached, epoch: s.epoch}
	s.tail = t.mine
	s.queued++
	s.lastUsed = time.Now()
	return t, nil
}

// wait blocks until every earlier request released its turn. On ctx done,
// or when a cell ahead of it detaches (a *SessionBusyError), the place is
// given up, but the hand-off to later requests still waits for the earlier
// ones, so order holds.
func (t *turn) wait(ctx context.Context) error {
	select {
	case <-t.prev:
		// A turn that is already its own (an idle session's) does not ask
		// ctx for its Done channel, which a context makes on the first ask.
		return nil
	default:
	}
	select {
	case <-t.prev:
		return nil
	case <-t.detached:
		select {
		case <-t.prev:
			return nil
		default:
		}
		if err := t.s.busy(); err != nil {
			t.giveUp()
			return err
		}
		// The job ended already; its turn is being released.
		select {
		case <-t.prev:
			return nil
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	t.giveUp()
	return context.Cause(ctx)
}

// giveUp releases the turn once every earlier one is released.
func (t *turn) giveUp() {
	reg := t.s.reg
	reg.wg.Add(1)
	go func() {
		defer reg.wg.Done()
		<-t.prev
		t.release()
	}()
}

// busy returns the error that refuses requests while a job runs, or nil.
func (s *session) busy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.job == nil {
		return nil
	}
	return &SessionBusyError{Session: s.key.Session, Job: s.job.id}
}

// beginJob makes d the session's job: later requests are refused, queued
// ones give up their places.
func (s *session) beginJob(d *detachedJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.job = d
	close(s.detached)
}

// endJob lets the session take requests again.
func (s *session) endJob() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.job = nil
	s.detached = make(chan struct{})
}

// runningJob is the session's job, or nil.
func (s *session) runningJob() *detachedJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.job
}

func (t *turn) release() {
	t.once.Do(func() {
		s := t.s
		s.mu.Lock()
		s.queued--
		idle := s.queued == 0
		retired := s.retired
		s.lastUsed = time.Now()
		s.mu.Unlock()
		close(t.mine)
		switch {
		case idle && retired:
			s.reg.endRetired(s)
		case idle:
			// Sessions over the limit wait for one to go idle.
			s.reg.trim()
		}
	})
}

func (s *session) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued == 0
}

func (s *session) lastUsedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsed
}

func (s *session) info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := Info{Key: s.key, Busy: s.queued > 0, Resetting: s.resetting, LastUsed: s.lastUsed, Languages: []string{}}
	if s.job != nil {
		info.Job = s.job.id
	}
	for lang, ex := range s.execs {
		if ex.Alive() {
			info.Languages = append(info.Languages, lang)
		}
	}
	slices.Sort(info.Languages)
	return info
}

func (s *session) beginReset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resetting {
		return ErrResetInProgress
	}
	s.resetting = true
	return nil
}

func (s *session) endReset() {
	s.mu.Lock()
	s.resetting = false
	s.mu.Unlock()
}

// reset waits for the session's turn and kills its interpreters; a second
// reset while one is in progress is refused.
func (s *session) reset(ctx context.Context) error {
	if err := s.beginReset(); err != nil {
		return err
	}
	defer s.endReset()
	turn, err := s.enqueue()
	if err != nil {
		return err
	}
	if err := turn.wait(ctx); err != nil {
		return err
	}
	defer turn.release()
	s.killAll(whyReset)
	return nil
}

// executor returns the live executor for lang, starting one when there is
// none or the last one died (a loss its next cell tells, statelost.go).
// started reports a new one, and notes the warnings of its start for the
// cell to show (extension modules refused or failing).
func (s *session) executor(ctx context.Context, lang string, environ []string) (ex Executor, started bool, notes []frames.Frame, err error) {
	s.mu.Lock()
	old, closed := s.execs[lang], s.closed
	s.mu.Unlock()
	if closed {
		return nil, false, nil, ErrSessionClosed
	}
	if old != nil && old.Alive() {
		return old, false, nil, nil
	}
	if old != nil {
		_ = old.Kill()
		s.mu.Lock()
		s.lostLocked(lang, whyEndedBetween, true)
		s.mu.Unlock()
	}
	ex, env, notes, err := s.start(ctx, lang, environ)
	s.mu.Lock()
	if err == nil {
		s.execs[lang] = ex
		s.setGotEnvLocked(lang, pickEnv(env, lang))
		s.startedLocked(lang)
		if lang == LangPython {
			s.unsuspendLocked() // the stopped interpreter is gone; this one runs
		}
	} else {
		delete(s.execs, lang)
	}
	s.mu.Unlock()
	if hook := s.reg.cfg.OnHold; err == nil && hook != nil {
		hook(s.key, lang)
	}
	return ex, err == nil, notes, err
}

// startWarner is implemented by executors whose start can warn (a gateway
// kernel's extension module that raised).
type startWarner interface {
	Warnings() []frames.Frame
}

// start starts lang's interpreter with environ (nil: Config.Environ);
// env is the environment it got.
func (s *session) start(ctx context.Context, lang string, environ []string) (ex Executor, env []string, notes []frames.Frame, err error) {
	cfg := &s.reg.cfg
	starter := cfg.Starters[lang]
	if starter == nil {
		return nil, nil, nil, &unsupportedLanguageError{lang}
	}
	env, err = s.launchEnv(environ)
	if err != nil {
		return nil, nil, nil, err
	}
	var mods []runner.Module
	if lang == LangPython {
		mods, notes = s.reg.modules(s.key.Cwd)
	}
	ex, err = starter(ctx, Spec{
		Language:      lang,
		Session:       s.key.Session,
		Python:        s.python,
		Cwd:           s.key.Cwd,
		Env:           env,
		Modules:       mods,
		StartTimeout:  cfg.StartTimeout,
		Grace:         cfg.Grace,
		Stdin:         cfg.Stdin,
		StdinTerminal: cfg.StdinTerminal,
		StdinWithheld: cfg.StdinWithheld,
		Terminal:      cfg.Terminal,
		PythonArgs:    cfg.PythonArgs,
		MergeStderr:   cfg.MergeStderr,
	})
	if w, ok := ex.(startWarner); ok && err == nil {
		notes = append(notes, w.Warnings()...)
	}
	return ex, env, notes, err
}

// launchEnv is the filtered host environment (environ, else
// Config.Environ: baseEnv) plus evalhost's own variables.
func (s *session) launchEnv(environ []string) ([]string, error) {
	cfg := &s.reg.cfg
	env := s.baseEnv(environ)
	if cfg.EnvHook != nil {
		extra, err := cfg.EnvHook()
		if err != nil {
			return nil, fmt.Errorf("interpreter environment: %w", err)
		}
		for k, v := range extra {
			env = setEnv(env, k, v)
		}
	}
	if cfg.Home != "" {
		env = setEnv(env, "EVALHOST_HOME", cfg.Home)
	}
	if s.key.IPython {
		env = setEnv(env, "EVALHOST_IPYTHON", "1")
	}
	return setEnv(env, "PI_TOOL_BRIDGE_SESSION", s.key.Session), nil
}

// current is the session's executor for lang now (nil when none runs).
func (s *session) current(lang string) Executor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.execs[lang]
}

// dead reports whether the session's interpreter for lang has ended since
// its last cell (the next executor call would replace it).
func (s *session) dead(lang string) bool {
	ex := s.current(lang)
	return ex != nil && !ex.Alive()
}

// drop kills and forgets the executor for lang, whose state went as why
// says (statelost.go).
func (s *session) drop(lang, why string) {
	s.mu.Lock()
	ex := s.execs[lang]
	delete(s.execs, lang)
	if ex != nil {
		s.lostLocked(lang, why, false)
		if lang == LangPython {
			s.unsuspendLocked() // the stopped interpreter leaves: Kill ends it
		}
	}
	s.mu.Unlock()
	if ex != nil {
		_ = ex.Kill()
	}
}

// killAll drops every executor: the state of the whole session is gone,
// as why says.
func (s *session) killAll(why string) {
	s.mu.Lock()
	for lang := range s.execs {
		s.lostLocked(lang, why, false)
	}
	s.mu.Unlock()
	s.stopAll(false, Executor.Kill)
}

// shutdown closes the session's executors gracefully; later requests fail.
func (s *session) shutdown() { s.stopAll(true, Executor.Close) }

// stopAll takes every executor out of the session and stops them in
// parallel, returning when all are stopped.
func (s *session) stopAll(closeSession bool, stop func(Executor) error) {
	s.mu.Lock()
	if closeSession {
		s.closed = true
	}
	execs := s.execs
	s.execs = map[string]Executor{}
	if execs[LangPython] != nil {
		// The stopped interpreter leaves: Close continues it, Kill ends it.
		s.unsuspendLocked()
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ex := range execs {
		wg.Add(1)
		go func() { defer wg.Done(); _ = stop(ex) }()
	}
	wg.Wait()
}
