package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evalhost/evalhost/bridge"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// DefaultIdle is how long a background process with no client and no
// running job waits before it ends itself.
const DefaultIdle = 30 * time.Minute

// Config sets up Serve.
type Config struct {
	Paths   Paths
	Version string        // evalhost's version and build: a client of another replaces this process
	Idle    time.Duration // end after this long without a client or a running job; default DefaultIdle
	// Settings are what the process fixed as it started (its artifacts
	// directory, backend, ...), by name, as its hello reports them: a
	// client whose own differ says so (its cells run with these). Opaque
	// here; a secret's value must be given as a digest, never as it is.
	Settings map[string]string
	// Sessions configures the one registry every client shares. Its EnvHook
	// and RunHook are the process's tool bridge's; IdleTimeout defaults to
	// Idle, so a session lives as long as the process.
	Sessions sessions.Config
	// Ready, when set, is called once the socket accepts connections.
	Ready func()
	// IdleKept, when set, is called each time Idle has passed with no
	// client but a running job kept the process (from the idle watch's
	// goroutine: it must not block).
	IdleKept func()
}

// Server is a running background process: one registry, one tool bridge,
// any number of client connections.
type Server struct {
	cfg    Config
	reg    *sessions.Registry
	bridge *bridge.Server
	state  *stateFile
	ln     *net.UnixListener
	sock   os.FileInfo // the socket file listen made, for closeListener to know it

	stopOnce sync.Once
	stopped  chan struct{}
	endHow   string // why it ended, after "which" (set once, by stop)

	mu      sync.Mutex
	conns   map[int]*conn
	seq     int
	lastUse time.Time
	wg      sync.WaitGroup // connections
	told    []sessions.Key // sessions a client was told the end of after endConns (addTold)
}

// Serve runs the background process until ctx ends, a client sends stop, or
// it has been idle for Config.Idle; then it cancels what still runs, closes
// every session and removes its socket and state file. It returns
// ErrRunning when another process serves this home.
func Serve(ctx context.Context, cfg Config) error {
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if err := ensureDir(cfg.Paths.Dir); err != nil {
		return err
	}
	lock, err := lockFile(cfg.Paths.Lock, false)
	if errors.Is(err, errLocked) {
		return ErrRunning
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	// The files are reached through the directory itself: a home moved
	// while this process runs keeps them, and a newer process at the old
	// path keeps its own.
	dir, err := os.OpenRoot(cfg.Paths.Dir)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := sameLock(lock, dir, filepath.Base(cfg.Paths.Lock)); err != nil {
		return err
	}
	stateName := filepath.Base(cfg.Paths.State)
	s := &Server{cfg: cfg, stopped: make(chan struct{}), conns: map[int]*conn{}, lastUse: time.Now(),
		state: &stateFile{dir: dir, name: stateName, st: State{PID: os.Getpid(), Version: cfg.Version, Sessions: []string{}}}}
	if err := s.listen(); err != nil {
		return err
	}
	defer dir.Remove(stateName) // a clean end: nothing was lost
	if err := s.state.write(); err != nil {
		s.closeListener()
		return fmt.Errorf("cannot write %s: %w", cfg.Paths.State, err)
	}
	s.bridge = bridge.New(bridge.ToolsFunc(s.routeTool), bridge.Options{})
	s.reg = sessions.New(s.registryConfig(dir))
	lostName := filepath.Base(cfg.Paths.Lost)
	for _, l := range takeLost(dir, lostName) {
		s.reg.NoteLost(l)
	}
	if cfg.Ready != nil {
		cfg.Ready()
	}
	var loops sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); s.accept() }()
	go func() { defer loops.Done(); s.watchIdle(ctx) }()
	<-s.stopped
	s.closeListener()
	loops.Wait()
	s.end(dir, lostName)
	return nil
}

// registryConfig is cfg.Sessions with the hooks that tie the registry to
// this process: its idle clock, the jobs file, the state file and the bridge.
func (s *Server) registryConfig(dir *os.Root) sessions.Config {
	rc := s.cfg.Sessions
	if rc.IdleTimeout == 0 {
		rc.IdleTimeout = s.cfg.Idle
	}
	// The idle clock starts again when a job ends: a job keeps the process
	// (so its session) alive while it runs, with or without a client.
	onJobEnd := rc.OnJobEnd
	rc.OnJobEnd = func(info sessions.JobInfo) {
		s.mu.Lock()
		s.lastUse = time.Now()
		s.mu.Unlock()
		if onJobEnd != nil {
			onJobEnd(info)
		}
	}
	jobs := jobCounter{dir, filepath.Base(s.cfg.Paths.Jobs)}
	rc.FirstJob, rc.OnJobID = jobs.last()+1, jobs.given
	// Best effort, as state's other writes: only a crash report reads it.
	rc.OnHold = func(key sessions.Key, lang string) { _ = s.state.hold(key, lang) }
	rc.EnvHook = s.bridge.Env
	rc.RunHook = func(run sessions.RunInfo, active bool) {
		s.bridge.TrackRun(bridge.Run{Session: run.Session, ID: run.Run, Request: run.Request, Cell: run.Cell}, active)
	}
	return rc
}

// end ends the connections, then the sessions and the bridge, and keeps
// what the sessions' clients were not told for the next process to tell.
func (s *Server) end(dir *os.Root, lostName string) {
	told := s.endConns()
	s.wg.Wait()
	s.mu.Lock()
	told = append(told, s.told...)
	s.mu.Unlock()
	// A session a connected client had a request in, or waited for a job
	// of: that client was told (the stopping line), so its next command
	// is not told again.
	untold := slices.DeleteFunc(s.reg.Untold(), func(l sessions.Loss) bool {
		return slices.ContainsFunc(told, func(k sessions.Key) bool { return toldOf(k, l.Key) })
	})
	s.reg.Close()
	s.bridge.Close()
	for i := range untold {
		if untold[i].Why == "" {
			untold[i].Why = endedWhy(os.Getpid(), s.endHow)
		}
	}
	// Best effort: a failed write costs the notices, not the end.
	_ = addLost(dir, lostName, untold)
}

// listen binds the socket after removing a stale one (the lock says no
// process serves it). It binds at Paths.Bind and renames that to the
// socket once of mode 0600: a client that found it before the chmod would
// refuse it as open to others, where it should wait on the start lock.
func (s *Server) listen() error {
	path, bind := s.cfg.Paths.Socket, s.cfg.Paths.Bind
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return err
	}
	for _, p := range []string{path, bind} {
		if err := removeStale(p); err != nil {
			return err
		}
	}
	addr, release, err := socketAddr(bind)
	if err != nil {
		return err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	release()
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", path, err)
	}
	// Close would unlink addr, which may be a /proc name whose descriptor
	// is gone or reused by then, and is not the socket's name once
	// renamed: closeListener removes path itself.
	ln.SetUnlinkOnClose(false)
	afterBind()
	err = os.Chmod(bind, 0o600)
	if err == nil {
		s.sock, err = os.Lstat(bind)
	}
	if err == nil {
		err = os.Rename(bind, path)
	}
	if err != nil {
		ln.Close()
		os.Remove(bind)
		return fmt.Errorf("cannot make the socket %s private: %w", path, err)
	}
	s.ln = ln
	return nil
}

// afterBind lets a test act between the bind and the chmod.
var afterBind = func() {}

// closeListener stops accepting and removes the socket if it is still the
// one listen made: a home moved away while this process ran may have a
// newer process's socket at the old name.
func (s *Server) closeListener() {
	s.ln.Close()
	if fi, err := os.Lstat(s.cfg.Paths.Socket); err == nil && os.SameFile(fi, s.sock) {
		os.Remove(s.cfg.Paths.Socket)
	}
}

// ending says whether stop was called.
func (s *Server) ending() bool {
	select {
	case <-s.stopped:
		return true
	default:
		return false
	}
}

// stopIfIdle stops the process unless a client other than by has a
// request in it (queued or running) or a job runs: a command replacing it
// for another build asked first, but a request may have come since.
// busy says why it did not stop. s.mu orders it against conn.eval.
func (s *Server) stopIfIdle(by *conn, how string) (busy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, c := range s.conns {
		if c == by {
			continue
		}
		c.mu.Lock()
		for _, fl := range c.inflight {
			names = append(names, fl.session)
		}
		c.mu.Unlock()
	}
	if len(names) > 0 {
		slices.Sort(names)
		return "busy: other commands have requests in sessions " + strings.Join(slices.Compact(names), ", ")
	}
	if s.jobRunning() {
		return "busy: a job runs"
	}
	s.stop(how)
	return ""
}

// stop ends Serve, for the reason how gives (after "which", as "which was
// stopped"); safe to call more than once: the first reason stands.
func (s *Server) stop(how string) {
	s.stopOnce.Do(func() {
		s.endHow = how + " at " + stamp(time.Now())
		close(s.stopped)
	})
}

func (s *Server) accept() {
	for {
		nc, err := s.ln.AcceptUnix()
		if err != nil {
			s.stop("ended when its socket failed") // the listener closed, or broke: either way, end
			return
		}
		if uid, err := peerUID(nc); err != nil || (uid >= 0 && uid != os.Getuid()) {
			nc.Close() // another user's process: say nothing
			continue
		}
		s.mu.Lock()
		s.seq++
		c := newConn(s, s.seq, nc)
		s.conns[c.id] = c
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c.id)
			s.lastUse = time.Now()
			s.mu.Unlock()
		}()
	}
}

// watchIdle ends the process when it has had no client and no running job
// for Config.Idle.
func (s *Server) watchIdle(ctx context.Context) {
	t := time.NewTicker(max(min(s.cfg.Idle/4, 30*time.Second), 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-ctx.Done():
			s.stop("was stopped by a signal")
			return
		case now := <-t.C:
			s.mu.Lock()
			idle := len(s.conns) == 0 && now.Sub(s.lastUse) >= s.cfg.Idle
			s.mu.Unlock()
			if !idle {
				continue
			}
			if !s.jobRunning() {
				s.stop("ended itself after " + s.cfg.Idle.String() + " without a client")
				return
			}
			if s.cfg.IdleKept != nil {
				s.cfg.IdleKept()
			}
		}
	}
}

func (s *Server) jobRunning() bool {
	for _, j := range s.reg.Jobs() {
		if j.State == sessions.JobRunning {
			return true
		}
	}
	return false
}

// toldOf says whether the client told of told was told of key's loss: a
// key without an interpreter is a job's session, whichever its
// interpreter (a job names its session and cwd).
func toldOf(told, key sessions.Key) bool {
	return told == key || (told.Python == "" && told.Session == key.Session && told.Cwd == key.Cwd)
}

// endConns tells every client why the process ends, cancels its requests
// and ends its connection once they have sent their end. told are the
// sessions the clients' requests were queued in, and those of the jobs
// they waited for or stopped (without Python: see toldOf). A client that stopped
// reading (its command stopped, its output piped to a pager left open) is
// not waited for past serve.StalledWrite: the end, and with it the lock a
// stop and every later command wait for, waited for it for ever. All are
// bounded first, so that several such clients cost that bound once.
func (s *Server) endConns() (told []sessions.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.enc.BoundWrites(serve.StalledWrite)
	}
	for _, c := range s.conns {
		told = append(told, c.end(s.endHow)...)
	}
	return told
}

// addTold records a session whose client was told the process ends
// after endConns counted the clients' requests.
func (s *Server) addTold(key sessions.Key) {
	s.mu.Lock()
	s.told = append(s.told, key)
	s.mu.Unlock()
}

// runID names a client's request inside the shared registry: two clients
// may both call theirs "run".
func runID(conn int, id string) string { return strconv.Itoa(conn) + "/" + id }

// routeTool hands a cell's tool call to the client whose request runs it.
func (s *Server) routeTool(ctx context.Context, call bridge.Call) (json.RawMessage, error) {
	n, id, ok := strings.Cut(call.Request, "/")
	conn, err := strconv.Atoi(n)
	if !ok || err != nil {
		return nil, fmt.Errorf("tool call from an unknown request %q", call.Request)
	}
	s.mu.Lock()
	c := s.conns[conn]
	s.mu.Unlock()
	if c == nil {
		return nil, errors.New("the command that ran this cell has ended; no one can answer the tool call")
	}
	call.Request = id
	return c.relay.Call(ctx, call)
}

// sameLock checks that the lock held is the one in dir: the home moved (or
// was replaced) between the lock and the directory's opening would leave
// this process holding one directory's lock and writing into another's.
func sameLock(lock *os.File, dir *os.Root, name string) error {
	held, err := lock.Stat()
	if err != nil {
		return err
	}
	there, err := dir.Lstat(name)
	if err != nil || !os.SameFile(held, there) {
		return fmt.Errorf("%s changed as the background process started (the home was moved or replaced); start it again", lock.Name())
	}
	return nil
}
