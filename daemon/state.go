package daemon

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
	path string
	mu   sync.Mutex
	st   State
}

func (f *stateFile) write() error {
	b, err := json.Marshal(f.st)
	if err != nil {
		return err
	}
	return replaceFile(f.path, b)
}

// replaceFile writes data to path whole: a temp file beside it, renamed
// over it, so a reader (or a crash) never sees a part.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
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

// forget drops a session that was closed: its state is not lost by a crash.
func (f *stateFile) forget(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.st.Sessions, name)
	if i < 0 {
		return nil
	}
	f.st.Sessions = slices.Delete(f.st.Sessions, i, i+1)
	f.st.Held = slices.DeleteFunc(f.st.Held, func(l sessions.Loss) bool { return l.Key.Session == name })
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
type jobCounter struct{ path string }

// last is the number on disk, 0 when there is none (or it is unreadable:
// the next process then starts again at 1, as before the file existed).
func (c jobCounter) last() uint64 {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// given records n, written whole (temp file, rename) before the job's id
// is shown to anyone. Best effort: a failed write costs only uniqueness.
func (c jobCounter) given(n uint64) {
	_ = replaceFile(c.path, []byte(strconv.FormatUint(n, 10)+"\n"))
}
