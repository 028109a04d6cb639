package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/evalhost/evalhost/sessions"
)

// State is what a live background process writes about itself: a client
// that finds it while no process holds the lock knows one died (SIGKILL, a
// crash) and which sessions' state went with it.
type State struct {
	PID      int      `json:"pid"`
	Version  string   `json:"version"`
	Sessions []string `json:"sessions"` // names of sessions that ran, in order of first use
	// Held are the sessions whose interpreters started, by key and
	// language: what a crash takes, told to each at its next cell.
	Held []sessions.Loss `json:"held,omitempty"`
}

// stateFile keeps State on disk, rewritten whole when a session name is new.
type stateFile struct {
	dir  *os.Root // the process's directory, wherever it is moved
	name string
	mu   sync.Mutex
	st   State
}

func (f *stateFile) write() error {
	b, err := json.Marshal(f.st)
	if err != nil {
		return err
	}
	return replaceFile(f.dir, f.name, b)
}

// replaceFile writes data to name in dir whole: a temp file beside it,
// renamed over it, so a reader (or a crash) never sees a part. Through
// dir, not a path: a process whose home was moved writes into its own
// directory, never into a newer process's at the old path.
func replaceFile(dir *os.Root, name string, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + name + "-" + hex.EncodeToString(rnd[:])
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		dir.Remove(tmp)
		return err
	}
	if err := dir.Rename(tmp, name); err != nil {
		dir.Remove(tmp)
		return err
	}
	return nil
}

// used records a session name; only a new one costs a write.
func (f *stateFile) used(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(f.st.Sessions, name) {
		return nil
	}
	f.st.Sessions = append(f.st.Sessions, name)
	return f.write()
}

// hold records an interpreter of lang started in session key; only a new
// key or language costs a write.
func (f *stateFile) hold(key sessions.Key, lang string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.st.Held, func(l sessions.Loss) bool { return l.Key == key })
	if i < 0 {
		f.st.Held = append(f.st.Held, sessions.Loss{Key: key})
		i = len(f.st.Held) - 1
	}
	if slices.Contains(f.st.Held[i].Languages, lang) {
		return nil
	}
	f.st.Held[i].Languages = append(f.st.Held[i].Languages, lang)
	return f.write()
}

// forget drops the sessions of name in cwd ("" every cwd) that were
// closed: their state is not lost by a crash. The name stays listed while
// it holds state in another cwd.
func (f *stateFile) forget(name, cwd string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.st.Sessions, name)
	if i < 0 {
		return nil
	}
	f.st.Held = slices.DeleteFunc(f.st.Held, func(l sessions.Loss) bool {
		return l.Key.Session == name && (cwd == "" || l.Key.Cwd == cwd)
	})
	if !slices.ContainsFunc(f.st.Held, func(l sessions.Loss) bool { return l.Key.Session == name }) {
		f.st.Sessions = slices.Delete(f.st.Sessions, i, i+1)
	}
	return f.write()
}

// readState reads what a process left behind; ok is false when none did.
func readState(path string) (State, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, false
	}
	var st State
	if json.Unmarshal(b, &st) != nil {
		return State{}, false
	}
	return st, true
}

// jobCounter keeps the last job number on disk: job ids ("job-N") go on
// counting across background processes, so that `evalhost jobs job-1` after
// a restart (a crash, a stop, the idle exit) finds no job rather than a new
// one of the same name.
type jobCounter struct {
	dir  *os.Root
	name string
}

// last is the number on disk, 0 when there is none (or it is unreadable:
// the next process then starts again at 1, as before the file existed).
func (c jobCounter) last() uint64 {
	b, err := c.dir.ReadFile(c.name)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// given records n, written whole (temp file, rename) before the job's id
// is shown to anyone. Best effort: a failed write costs only uniqueness.
func (c jobCounter) given(n uint64) {
	_ = replaceFile(c.dir, c.name, []byte(strconv.FormatUint(n, 10)+"\n"))
}
