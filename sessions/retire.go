package sessions

import "github.com/evalhost/evalhost/internal/trustdir"

// A session's cwd removed (or moved away) and made again at the same path
// is another directory: python3 started there would run there, fresh. The
// session holds its interpreters in the old one, where os.getcwd() fails
// and relative paths lead nowhere, so a request that finds its key at
// another directory (cwdID, known without a call on a warm request: the
// key cache drops an entry when its cwd goes) retires it and starts a
// fresh session there, whose first cell of each language says why the
// state from before is gone (a pending loss, statelost.go). A retired
// session that runs or has requests queued finishes them in its own
// interpreters (a cell is not killed for another command's arrival) and is
// closed when its queue empties; the new session does not wait for it.

// whyCwdGone follows "its py interpreter".
func whyCwdGone(cwd string) string {
	return "was left in " + trustdir.Shown(cwd) + ", a directory since removed or moved (the one there now is another)"
}

// retireLocked takes s out of the registry's map; r.mu is held. An idle s
// is closed now, a busy one as its last request ends (endRetired).
func (r *Registry) retireLocked(s *session) {
	delete(r.sessions, s.key)
	r.rememberLocked(s, whyCwdGone(s.key.Cwd))
	s.mu.Lock()
	s.retired = true
	idle := s.queued == 0
	s.mu.Unlock()
	if !idle {
		r.retired[s] = struct{}{}
		return
	}
	s.markClosed()
	r.wg.Add(1)
	go func() { defer r.wg.Done(); s.shutdown() }()
}

// endRetired closes a retired session whose queue emptied; once the
// registry is closing, Close does (it is left where Close finds it).
func (r *Registry) endRetired(s *session) {
	r.mu.Lock()
	_, ok := r.retired[s]
	ok = ok && !r.closed
	if ok {
		delete(r.retired, s)
		r.wg.Add(1)
	}
	r.mu.Unlock()
	if ok {
		s.markClosed()
		go func() { defer r.wg.Done(); s.shutdown() }()
	}
}

// A session's cwd renamed (mv d e) is the same directory under another
// path: a request from the new path reaches the session, as one through a
// link does, with its state; it started a fresh one, and the state stayed
// with a session listed under a path that no longer led anywhere. Its
// interpreters are sent the new path with their next cell (their
// sys.path entry for the cwd names it).

// movedLocked takes out of r.sessions and returns the idle session of
// key's id and interpreter whose directory is dir under a path that no
// longer leads to it, with its key moved to key; nil when there is none.
// A busy one is left where it is (its running request reads its key), and
// the request gets a fresh session. r.mu is held.
func (r *Registry) movedLocked(key Key, dir cwdID) *session {
	if dir == (cwdID{}) {
		return nil
	}
	for k, s := range r.sessions {
		if k.Session != key.Session || k.Python != key.Python || k.IPython != key.IPython || s.dir != dir {
			continue
		}
		if id, _, err := statCwd(k.Cwd); err == nil && !id.differs(dir) {
			continue // both paths lead to it (a bind mount): two sessions, as before
		}
		if s.moveLocked(key) {
			delete(r.sessions, k)
			return s
		}
	}
	return nil
}

// moveLocked gives an idle s the key of its directory's new path, and has
// each interpreter sent it with its next cell; false when s is busy or
// closed.
func (s *session) moveLocked(key Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queued != 0 || s.closed {
		return false
	}
	s.key = key
	for lang := range s.execs {
		if s.unset == nil {
			s.unset = map[string]bool{}
		}
		s.unset[lang] = true
	}
	return true
}
