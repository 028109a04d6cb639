package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/runner"
	"github.com/evalhost/evalhost/streamsink"
)

// Config sets up a Registry. Zero values take the documented defaults.
type Config struct {
	Home           string              // evalhost home: runner cache, modules, managed venv
	Python         string              // explicit interpreter (--python); "" resolves per cwd
	MaxSessions    int                 // idle sessions kept beyond it are evicted, LRU first; default 4 (see trimLocked)
	IdleTimeout    time.Duration       // idle sessions shut down after it; default 5 min; <0 never
	DefaultTimeout time.Duration       // per cell; default 30 s
	Grace          time.Duration       // interrupt grace before a kill; default 2 s
	StartTimeout   time.Duration       // ready handshake; default 10 s
	MaxRSS         int64               // bytes; an interpreter over it after a cell is recycled; 0 off
	IPython        bool                // every session runs Python cells through IPython (see Request.IPython)
	Environ        []string            // the host's environment, filtered before launch; default os.Environ()
	Getenv         func(string) string // for interpreter resolution; default os.Getenv
	ExtraEnv       map[string]string   // set in every interpreter after filtering; a name CheckEnvName refuses refuses every request
	// EnvHook, when set, adds variables at each interpreter start (the tool
	// bridge starts its server lazily there and returns its URL and token).
	EnvHook  func() (map[string]string, error)
	Starters map[string]Starter // per language; default the runner and the sh shell
	// Stdin, when set, is the standard input of every Python interpreter
	// the runner's starter starts (host.Options.Stdin): a script's, which
	// reads what is piped into it as under python3. For a registry that
	// runs one script, as evalhost run's; nil (the default): cells have no
	// stdin: input() fails at once, sys.stdin reads empty. The registry
	// does not close it.
	Stdin *os.File
	// StdinWithheld: without Stdin, why the program does not give the
	// cells a stdin it has (host.Options.StdinWithheld: its terminal, or
	// what a client's command was piped): sys.stdin then refuses at once,
	// saying so and what to do, rather than reading empty.
	StdinWithheld string
	// StdinTerminal: Stdin is a terminal that becomes each such
	// interpreter's controlling terminal (host.Options.StdinTerminal), for
	// a person at a terminal (evalhost run --tty): input() then waits for
	// them, against the brief's non-interactive stdin, which is why it is
	// asked for, never inferred.
	StdinTerminal bool
	// Terminal lists the fds (1, 2) whose bytes the caller shows on a
	// terminal, for the runner's Python interpreters (host.Options.Terminal):
	// their sys.stdout/sys.stderr say isatty(), as python3's would there.
	// For every request of the registry's (a one-shot run's); a request's
	// own is Request.Terminal.
	Terminal []int
	// PythonArgs are python3's interpreter options for every Python
	// interpreter the runner's starter starts, before runner.py
	// (host.Options.Args), as for python3 -u -W error FILE: -b -B -E -I
	// -O -q -s -S -u, -W ARG, -X OPT (CheckPythonArgs; anything else
	// refuses every request with a *PythonArgsError, and a gateway kernel's
	// start fails on any). They act on the cells' code as on a script's
	// under python3 (runner/doc.go says how the runner keeps them).
	PythonArgs []string
	// MergeStderr gives the runner's Python interpreters one pipe for fd 1
	// and fd 2 (host.Options.MergeStderr): for a caller whose stdout and
	// stderr are one destination, as evalhost run's with 2>&1 or on a
	// terminal, which then gets what a cell, its children and C code write
	// in the kernel's order, all of it as stdout, its own text in the
	// program's order (as python3 -u writes it). A caller that needs a
	// cell's stderr apart must not set it. sh cells and gateway kernels
	// are not affected.
	MergeStderr bool
	Sink        streamsink.Options // per-cell output bounds; its Store receives spilled output
	// RunHook, when set, is called with active=true before a cell executes and
	// false after, so the tool bridge accepts calls only from running cells.
	RunHook func(run RunInfo, active bool)
	// OnJobEnd, when set, receives each job's info (with its Result) when
	// it ends, whatever ended it: after its session takes requests again
	// and before WaitJob returns, from the job's goroutine, so it must not
	// block for long. It is never called before the request that detached
	// the job returned.
	OnJobEnd func(JobInfo)
	// FirstJob is the number of the registry's first job ("job-N"), later
	// ones counting on; 0 means 1. OnJobID, when set, hears each number as
	// it is given, from the detaching cell's goroutine: a process that
	// outlives registries (the background process, restarted) keeps the
	// numbers unique across them, so a job id never names another job.
	FirstJob uint64
	OnJobID  func(n uint64)
	// OnHold, when set, hears of each interpreter started in a session
	// (key), from the goroutine that started it: from then the session
	// holds state a crash of the process would take (the background
	// process writes it down for its successor; see Untold).
	OnHold func(key Key, lang string)
}

func (c *Config) fill() {
	if c.MaxSessions <= 0 {
		c.MaxSessions = 4
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.Grace <= 0 {
		c.Grace = 2 * time.Second
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 10 * time.Second
	}
	if c.Environ == nil {
		c.Environ = os.Environ()
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Starters == nil {
		c.Starters = DefaultStarters(c.Home)
	}
}

// Key identifies a persistent session.
type Key struct {
	Session string `json:"session"`
	Cwd     string `json:"cwd"`
	Python  string `json:"python"`
	IPython bool   `json:"ipython,omitempty"`
}

// Registry owns every session and the goroutines that serve them.
type Registry struct {
	cfg Config

	mu       sync.Mutex
	sessions map[Key]*session
	perCall  map[*session]struct{} // live per-call sessions, for Kill and Close
	retired  map[*session]struct{} // sessions whose cwd went, still busy (retire.go)
	closed   bool
	seq      uint64
	keys     keyCache   // what request cwds resolved to (keycache.go)
	lost     lossMemory // why closed sessions' state went (statelost.go)

	wg   sync.WaitGroup // sweeper, queue hand-offs, detachable cells
	stop chan struct{}

	jobs jobTable

	cfgErr error // CheckPythonArgs of cfg.PythonArgs, else CheckEnvName of cfg.ExtraEnv's names: every request is refused with it
}

// New returns a registry; Close it to shut every interpreter down.
func New(cfg Config) *Registry {
	cfg.fill()
	r := &Registry{cfg: cfg, sessions: map[Key]*session{}, perCall: map[*session]struct{}{}, retired: map[*session]struct{}{}, stop: make(chan struct{})}
	r.cfgErr = CheckPythonArgs(cfg.PythonArgs)
	if r.cfgErr == nil {
		if err := checkEnvNames(cfg.ExtraEnv); err != nil {
			r.cfgErr = fmt.Errorf("%w: Config.ExtraEnv: %w", ErrBadRequest, err)
		}
	}
	if cfg.IdleTimeout > 0 {
		r.wg.Add(1)
		go r.sweep()
	}
	return r
}

// Info describes a live session.
type Info struct {
	Key
	Languages []string  `json:"languages"` // interpreters alive now
	Busy      bool      `json:"busy"`
	Resetting bool      `json:"resetting,omitempty"`
	Job       string    `json:"job,omitempty"` // the detached job running in it
	LastUsed  time.Time `json:"lastUsed"`
}

// Sessions lists the live sessions, most recently used first.
func (r *Registry) Sessions() []Info {
	r.mu.Lock()
	list := make([]*session, 0, len(r.sessions))
	for _, s := range r.sessions {
		list = append(list, s)
	}
	r.mu.Unlock()
	infos := make([]Info, 0, len(list))
	for _, s := range list {
		infos = append(infos, s.info())
	}
	slices.SortFunc(infos, func(a, b Info) int { return b.LastUsed.Compare(a.LastUsed) })
	return infos
}

// lookup resolves a request's key and returns its session with the
// request's place in the session's queue already taken, creating the
// session when there is none. Taking the place under r.mu is what keeps a
// new session from being evicted (or idle-closed) before its first request
// runs: a session with a queued request is never idle.
func (r *Registry) lookup(req *Request) (*session, *turn, error) {
	cwd := req.Cwd
	if cwd == "" {
		cwd = "."
	}
	abs, dir, py, err := r.resolveKey(req, cwd)
	if err != nil {
		return nil, nil, err
	}
	key := Key{Session: req.Session, Cwd: abs, Python: py.Path, IPython: req.IPython || r.cfg.IPython}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, ErrClosed
	}
	if s := r.sessions[key]; s != nil && s.dir.differs(dir) {
		r.retireLocked(s) // its cwd was removed: this is another directory
	}
	var s *session
	switch {
	case req.Mode == ModePerCall:
		s = newSession(r, key, py)
		r.perCall[s] = struct{}{}
	case r.sessions[key] != nil:
		s = r.sessions[key]
	default:
		if s = r.movedLocked(key, dir); s == nil {
			s = newSession(r, key, py)
			s.dir = dir
			r.inheritLocked(s)
		}
		r.sessions[key] = s
	}
	t, err := s.enqueue()
	if err != nil {
		// Only a closed session refuses, and a closed one has left
		// r.sessions; this is a bug guard, not a path a caller meets.
		return nil, nil, err
	}
	r.trimLocked()
	return s, t, nil
}

// resolveKey returns cwd's absolute path, which directory it is, and the
// interpreter, from r.keys while they hold (keycache.go: a warm request
// makes no call for the directory's identity, which holds as long as the
// entry does). The interpreter asked for is the request's, else the
// registry's.
func (r *Registry) resolveKey(req *Request, cwd string) (string, cwdID, Interpreter, error) {
	in := r.keyInput(cwd, r.explicitPython(req))
	if e, ok := r.keys.get(in, r.cfg.Home); ok && (e.resolved || !needsPython(req)) {
		return e.abs, e.id, e.py, nil
	}
	t := r.keys.begin(in)
	abs, id, err := checkCwd(cwd)
	if err != nil {
		return "", cwdID{}, Interpreter{}, err
	}
	r.keys.watch(&t, abs, r.cfg.Home)
	py, resolved, err := r.resolvePython(req, abs)
	if err != nil {
		return "", cwdID{}, Interpreter{}, err
	}
	r.keys.put(in, r.cfg.Home, keyOut{abs: abs, id: id, py: py, resolved: resolved}, t)
	return abs, id, py, nil
}

// explicitPython is the interpreter a request names (Request.Python, as
// run --session sends it), else the registry's Config.Python.
func (r *Registry) explicitPython(req *Request) string {
	if req.Python != "" {
		return req.Python
	}
	return r.cfg.Python
}

func needsPython(req *Request) bool {
	return slices.ContainsFunc(req.Cells, func(c Cell) bool { return c.Language == LangPython })
}

// resolvePython resolves lazily: a request of only sh cells needs none.
// resolved is false when it found none and the request needs none.
func (r *Registry) resolvePython(req *Request, cwd string) (py Interpreter, resolved bool, err error) {
	py, err = ResolveInterpreter(r.explicitPython(req), cwd, r.cfg.Home, r.cfg.Getenv, r.cfg.StartTimeout)
	if err != nil {
		if needsPython(req) {
			return Interpreter{}, false, err
		}
		return Interpreter{}, false, nil
	}
	return py, true, nil
}

// trimLocked shuts down the least recently used idle sessions while there
// are more than MaxSessions. A busy session (a request running or queued,
// which includes one just created) is never evicted: while more than
// MaxSessions are busy the limit is exceeded, and trim runs again as each
// request ends. Waiting for a slot instead could deadlock (a cell whose tool
// call makes the client eval in another session) and would hold a request
// back, silent, for as long as other sessions' cells run. The victims stop
// in the background, so no lookup waits for an interpreter's grace window;
// Close waits for them.
func (r *Registry) trimLocked() {
	if r.closed {
		return
	}
	for len(r.sessions) > r.cfg.MaxSessions {
		var victim *session
		for _, s := range r.sessions {
			if !s.idle() {
				continue
			}
			if victim == nil || s.lastUsedAt().Before(victim.lastUsedAt()) {
				victim = s
			}
		}
		if victim == nil {
			return // every session is busy
		}
		delete(r.sessions, victim.key)
		r.rememberLocked(victim, "was closed to keep at most "+plural.Of(r.cfg.MaxSessions, "session")+" open, the least recently used first")
		victim.markClosed()
		r.wg.Add(1)
		go func() { defer r.wg.Done(); victim.shutdown() }()
	}
}

// trim is trimLocked for a session that just went idle.
func (r *Registry) trim() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trimLocked()
}

// endPerCall shuts a per-call session down and forgets it.
func (r *Registry) endPerCall(s *session) {
	s.shutdown()
	r.mu.Lock()
	delete(r.perCall, s)
	r.mu.Unlock()
}

// live lists every session, persistent and per-call.
func (r *Registry) live() []*session {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := make([]*session, 0, len(r.sessions)+len(r.perCall)+len(r.retired))
	for _, s := range r.sessions {
		all = append(all, s)
	}
	for s := range r.perCall {
		all = append(all, s)
	}
	for s := range r.retired {
		all = append(all, s)
	}
	return all
}

func (r *Registry) sweep() {
	defer r.wg.Done()
	tick := time.NewTicker(max(min(r.cfg.IdleTimeout/4, 30*time.Second), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-tick.C:
			r.closeIdle(now)
		}
	}
}

func (r *Registry) closeIdle(now time.Time) {
	r.mu.Lock()
	var idle []*session
	for k, s := range r.sessions {
		if s.idle() && now.Sub(s.lastUsedAt()) >= r.cfg.IdleTimeout {
			idle = append(idle, s)
			delete(r.sessions, k)
			r.rememberLocked(s, "was closed after "+r.cfg.IdleTimeout.String()+" idle")
		}
	}
	r.mu.Unlock()
	for _, s := range idle {
		s.shutdown()
	}
}

// CloseSession closes every session with this id (any cwd) and reports
// whether one existed. A later request with this id starts a fresh
// session; the requests queued on a closed one end cancelled. A job running
// in it is killed (the session's state is gone, so it gets no interrupt
// and grace) and has ended, its result saying so, when CloseSession
// returns, so that Jobs never lists it running after the close was
// answered. Otherwise it returns at once: a cell running in it is
// interrupted at once, as a cancel does, and ends killed, its state gone;
// the interpreters shut down in the background (a cell that holds out
// against the interrupt is killed after the grace window; Close waits for
// them).
func (r *Registry) CloseSession(id string) bool { return r.CloseSessionIn(id, "") }

// CloseSessionIn is CloseSession for the sessions of this id in cwd (any
// interpreter); cwd "" is every cwd. cwd is made absolute as a request's
// is, but need not exist: a session whose directory was removed can be
// closed.
func (r *Registry) CloseSessionIn(id, cwd string) bool {
	in := r.cwdMatcher(cwd)
	r.mu.Lock()
	var closing []*session
	for k, s := range r.sessions {
		if k.Session == id && in(k.Cwd) {
			delete(r.sessions, k) // not remembered: its user closed it
			s.markClosed()
			closing = append(closing, s)
		}
	}
	for s := range r.retired { // its cell still runs, in a removed cwd
		if s.key.Session == id && in(s.key.Cwd) {
			delete(r.retired, s)
			s.markClosed()
			closing = append(closing, s)
		}
	}
	r.wg.Add(len(closing))
	r.mu.Unlock()
	for _, s := range closing {
		if d := s.runningJob(); d != nil {
			d.stop(reasonSessionClosed)
			s.killAll(whyClosed)
			<-d.done
		}
		go func() { defer r.wg.Done(); s.shutdown() }()
	}
	return len(closing) > 0
}

// Reset restarts the interpreters of the session (id, cwd), whatever its
// interpreter or engine, in queue order: requests queued before it finish
// first. cwd "" means every cwd the id is open in (as CloseSession).
// Resetting a session that does not exist is a no-op.
func (r *Registry) Reset(ctx context.Context, id, cwd string) error {
	_, err := r.ResetSession(ctx, id, cwd)
	return err
}

// ResetSession is Reset, also reporting whether a session matched: a client
// told "reset" for a session it named in the wrong cwd would otherwise
// believe its state was gone.
func (r *Registry) ResetSession(ctx context.Context, id, cwd string) (existed bool, err error) {
	var abs string
	if cwd != "" {
		if abs, _, err = checkCwd(cwd); err != nil {
			return false, err
		}
	}
	if id == "" {
		id = "default"
	}
	r.mu.Lock()
	var targets []*session
	for k, s := range r.sessions {
		if k.Session == id && (abs == "" || k.Cwd == abs) {
			targets = append(targets, s)
		}
	}
	r.mu.Unlock()
	for _, s := range targets {
		if err := s.reset(ctx); err != nil && !errors.Is(err, ErrSessionClosed) {
			// A session closed or evicted since the lookup has lost its
			// interpreters anyway: that is the reset done, not a failure.
			return true, err
		}
	}
	return len(targets) > 0, nil
}

// Close shuts every session down and waits for all goroutines. Running
// jobs are stopped (interrupt, grace, kill), their results saying so; to
// let them finish, call DrainJobs first.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	all := r.live()
	r.mu.Lock()
	r.sessions = map[Key]*session{}
	r.mu.Unlock()
	close(r.stop)
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.stopJob(reasonShutdown); s.shutdown() }()
	}
	wg.Wait()
	r.wg.Wait()
	r.keys.close()
	return nil
}

func (r *Registry) nextID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	return fmt.Sprintf("r%d", r.seq)
}

// modules are the extension modules an interpreter started in cwd runs:
// the user's (<home>/modules), then the project's (<cwd>/.evalhost/modules),
// which overrides a same-named user module; each directory and file judged
// by runner.FindModules, since a project directory may be anyone's (/tmp),
// the project's with the user's safe directories.
// What it refused comes back as warning frames for the first cell.
func (r *Registry) modules(cwd string) ([]runner.Module, []frames.Frame) {
	var places []runner.ModulePlace
	if r.cfg.Home != "" {
		places = append(places, runner.ModulePlace{Base: r.cfg.Home, Rel: "modules"})
	}
	places = append(places, runner.ModulePlace{Base: cwd, Rel: filepath.Join(".evalhost", "modules"), Safe: SafeDirectories(r.cfg.Home)})
	mods, refused := runner.FindModules(places)
	var warnings []frames.Frame
	for _, err := range refused {
		warnings = append(warnings, frames.Frame{Type: frames.TypeWarning, Message: err.Error()})
	}
	return mods, warnings
}

// KillSession kills the interpreters of every session with this id (any
// cwd) at once, as Kill does for all of them, and reports whether one
// existed; the sessions stay and start fresh interpreters on their next
// request. It is a second Ctrl-C for one session of a shared registry. A
// job running in one of them ends with it, its result saying so.
func (r *Registry) KillSession(id string) bool { return r.KillSessionIn(id, "") }

// KillSessionIn is KillSession for the sessions of this id in cwd (any
// interpreter; "" every cwd): the second Ctrl-C of a request kills its
// own session, not the same name's in other directories.
func (r *Registry) KillSessionIn(id, cwd string) bool {
	in := r.cwdMatcher(cwd)
	r.mu.Lock()
	var targets []*session
	for k, s := range r.sessions {
		if k.Session == id && in(k.Cwd) {
			targets = append(targets, s)
		}
	}
	for s := range r.retired {
		if s.key.Session == id && in(s.key.Cwd) {
			targets = append(targets, s)
		}
	}
	r.mu.Unlock()
	for _, s := range targets {
		if d := s.runningJob(); d != nil {
			d.stop(reasonSessionKilled)
		}
		s.killAll(whyKilled)
	}
	return len(targets) > 0
}

// Kill kills every interpreter of every session at once, without waiting
// for cells to settle; the sessions stay and start fresh interpreters on
// their next request. It is the second Ctrl-C. Running jobs end with it,
// their results saying so.
func (r *Registry) Kill() {
	for _, d := range r.jobs.running() {
		d.stop(reasonKilled)
	}
	for _, s := range r.live() {
		s.killAll(whyKilled)
	}
}

// cwdMatcher says whether a session's cwd is cwd, made absolute as a
// request's is (without checking it exists); every cwd matches "".
func (r *Registry) cwdMatcher(cwd string) func(string) bool {
	if cwd == "" {
		return func(string) bool { return true }
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return func(string) bool { return false }
	}
	return func(c string) bool { return c == abs }
}
