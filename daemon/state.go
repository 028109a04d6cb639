package daemon

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// State is what a live background process writes about itself: a client
// that finds it while no process holds the lock knows one died (SIGKILL, a
// crash) and which sessions' state went with it.
type State struct {
	PID      int      `json:"pid"`
	Version  string   `json:"version"`
	Sessions []string `json:"sessions"` // names of sessions that ran, in order of first use
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
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".state-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), f.path)
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

// forget drops a session that was closed: its state is not lost by a crash.
func (f *stateFile) forget(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.st.Sessions, name)
	if i < 0 {
		return nil
	}
	f.st.Sessions = slices.Delete(f.st.Sessions, i, i+1)
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
