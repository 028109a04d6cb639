package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/sessions"
)

// reclaim clears what a dead process left behind: waiting for its lock
// makes sure none lives (one may be stopping), and a state file left with
// it means it died without a stop, taking its sessions' state. That loss
// is told once, by each session's next cell (lost.json), not also by the
// command that found it, which may be another session's: a notice says it
// only when lost.json cannot take it. The sessions told answers true for
// were told already (ToldEnded) and are left out.
func reclaim(paths Paths, told func(sessions.Key) bool) ([]string, error) {
	lk, err := awaitLock(paths.Lock, lockWait)
	if errors.Is(err, errLocked) {
		st, _ := readState(paths.State)
		return nil, fmt.Errorf("a background process (pid %d) holds %s but does not answer on %s; end it (kill %d) and try again",
			st.PID, paths.Lock, paths.Socket, st.PID)
	}
	if err != nil {
		return nil, err
	}
	defer lk.Close()
	var notices []string
	if st, ok := readState(paths.State); ok {
		held := slices.DeleteFunc(st.Held, func(l sessions.Loss) bool { return told != nil && told(l.Key) })
		if err := noteCrash(paths, st.PID, held); err != nil {
			notices = append(notices, fmt.Sprintf("the background process (pid %d) had ended without a stop (killed or crashed); a new one started, and %s", st.PID, lostState(held)))
		}
		if err := os.Remove(paths.State); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return notices, removeStale(paths.Socket)
}

// noteCrash adds held, the sessions whose state the crashed process pid
// took, to lost.json, so each one's next cell says so.
func noteCrash(paths Paths, pid int, held []sessions.Loss) error {
	why := endedWhy(pid, "ended without a stop (killed or crashed); found at "+stamp(time.Now()))
	for i := range held {
		held[i].Why = why
	}
	dir, err := os.OpenRoot(paths.Dir)
	if err != nil {
		return err
	}
	defer dir.Close()
	return addLost(dir, filepath.Base(paths.Lost), held)
}

func lostState(held []sessions.Loss) string {
	var names []string
	for _, l := range held {
		if !slices.Contains(names, l.Key.Session) {
			names = append(names, l.Key.Session)
		}
	}
	if len(names) == 0 {
		return "it held no session's state"
	}
	return "the state of its sessions (" + trustdir.ShownLines(names, ", ") + ") is lost"
}

// ToldEnded records that a command told its user that the background
// process pid, which ended without a word (killed, crashed) while the
// command's cell ran, took the state of session name in cwd (any
// interpreter): it clears what the process left as a later command would
// (reclaim, under the start lock), leaving that session out, so the
// session's next cell does not tell it again. The other sessions' next
// cells still do. When another command cleared it first (one told of its
// own session, as several running commands all are), that put this
// session's loss in lost.json, and it is taken out there; once a process
// started since has taken lost.json, its next cell tells it all the same.
func ToldEnded(paths Paths, pid int, name, cwd string) error {
	lk, err := lockFile(paths.Start, true)
	if err != nil {
		return err
	}
	defer lk.Close()
	told := func(k sessions.Key) bool { return k.Session == name && k.Cwd == cwd }
	if st, ok := readState(paths.State); !ok || st.PID != pid {
		return forgetLost(paths, pid, told)
	}
	_, err = reclaim(paths, told)
	return err
}
