package sessions

import (
	"fmt"
	"slices"
)

// State loss told to whoever relied on it.
//
// A session numbers its interpreters per language as they start (gen). A
// request notes, when it is queued, which interpreter held the state it may
// rely on; a cell of it that then runs in another one (the first was
// killed, reset, recycled, died, or its session was closed and opened
// again) says so, with why. Another request's loss is news to a request;
// its own (its cell's timeout, death or reset) is not told twice.

// genSeen is what a request saw of one language's interpreters.
type genSeen struct {
	lang string
	gen  uint64 // the interpreter that held its state; 0: none had started
}

// anyGen marks a language whose state the request itself lost: the next
// interpreter it meets is no news.
const anyGen = ^uint64(0)

// Why a session's state went, as the told cell says it after "its <lang>
// interpreter"; the reasons owned by one caller are built beside it.
const (
	whyEndedBetween = "ended between cells (its process exited or was killed)"
	whyKilled       = "was killed by a second interrupt (Ctrl-C)"
	whyReset        = "was reset"
	whyResetCell    = "was reset by a cell with reset set"
	whyClosed       = "was closed (evalhost kill, or a client's close)"
)

// gensLocked copies the session's interpreter numbers for a request being
// queued; s.mu is held.
func (s *session) gensLocked() []genSeen {
	if len(s.gens) == 0 {
		return nil
	}
	seen := make([]genSeen, 0, len(s.gens))
	for lang, n := range s.gens {
		seen = append(seen, genSeen{lang, n})
	}
	return seen
}

// lostLocked records that lang's state is gone and why; s.mu is held. A
// language that never had an interpreter had no state to lose.
func (s *session) lostLocked(lang, why string) {
	if s.gens[lang] != 0 {
		s.lostWhy[lang] = why
	}
}

// genOf is the number of lang's current (or last) interpreter.
func (s *session) genOf(lang string) (uint64, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gens[lang], s.lostWhy[lang]
}

// stateLangs are the languages whose state a session holds (or held): what
// goes with it when it is closed.
func (s *session) stateLangs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	langs := make([]string, 0, len(s.gens))
	for lang := range s.gens {
		langs = append(langs, lang)
	}
	return langs
}

// inherit starts a session opened again where a closed one held state: its
// first interpreter of each language is news to every request queued
// before it starts.
func (s *session) inherit(l loss) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lang := range l.langs {
		s.gens[lang] = 1
		s.lostWhy[lang] = l.why
	}
}

// seenGen is the interpreter of lang that the job relied on when queued.
func (j *Job) seenGen(lang string) uint64 {
	for _, g := range j.turn.seen {
		if g.lang == lang {
			return g.gen
		}
	}
	return 0
}

// see records that the job now relies on interpreter gen of lang.
func (j *Job) see(lang string, gen uint64) {
	for i := range j.turn.seen {
		if j.turn.seen[i].lang == lang {
			j.turn.seen[i].gen = gen
			return
		}
	}
	j.turn.seen = append(j.turn.seen, genSeen{lang, gen})
}

// lostAll records that the job itself ended every interpreter of its
// session (a cell's reset).
func (j *Job) lostAll() {
	for _, lang := range j.s.stateLangs() {
		j.see(lang, anyGen)
	}
}

// tellLoss says, once, that the cell runs in another interpreter than the
// one that held the state its request relied on, when someone else ended
// that one; it runs after the cell's executor is ready.
func (c *cellRun) tellLoss() {
	lang := c.cell.Language
	gen, why := c.j.s.genOf(lang)
	seen := c.j.seenGen(lang)
	c.j.see(lang, gen)
	if seen == 0 || seen == anyGen || seen == gen || why == "" {
		return
	}
	c.markLost(false)
	c.notice(fmt.Sprintf("[state lost: session %s's %s interpreter %s; this cell runs in a fresh one, and variables from before are gone]\n",
		c.j.s.key.Session, lang, why))
}

// loss is why a closed session's state went, kept by the registry for the
// session opened again under its key.
type loss struct {
	why   string
	langs []string // nil: every language (the holder's were not known)
}

// maxLosses bounds the closed sessions a registry remembers; the oldest is
// forgotten first.
const maxLosses = 256

// lossMemory remembers why closed sessions' state went, by key, and by
// name for those whose cwd and interpreter were not known (NoteLost).
type lossMemory struct {
	byKey  map[Key]loss
	byName map[string]loss
	order  []any // Key or string, oldest first
}

func (m *lossMemory) add(k any, l loss) {
	if m.byKey == nil {
		m.byKey, m.byName = map[Key]loss{}, map[string]loss{}
	}
	switch k := k.(type) {
	case Key:
		m.byKey[k] = l
	case string:
		m.byName[k] = l
	}
	m.order = append(m.order, k)
	for len(m.order) > maxLosses {
		switch old := m.order[0].(type) {
		case Key:
			delete(m.byKey, old)
		case string:
			delete(m.byName, old)
		}
		m.order = m.order[1:]
	}
}

// take returns and forgets what is remembered for key, by key first.
func (m *lossMemory) take(key Key) (loss, bool) {
	if l, ok := m.byKey[key]; ok {
		delete(m.byKey, key)
		return l, true
	}
	if l, ok := m.byName[key.Session]; ok {
		delete(m.byName, key.Session)
		return l, true
	}
	return loss{}, false
}

// rememberLocked keeps why s's state went, for the session opened again
// under its key; r.mu is held.
func (r *Registry) rememberLocked(s *session, why string) {
	if langs := s.stateLangs(); len(langs) > 0 {
		r.lost.add(s.key, loss{why: why, langs: langs})
	}
}

// NoteLost tells the registry that the state of the sessions named name,
// in any cwd, went with something outside it (the background process that
// held them ended): the first interpreter of each language started in such
// a session says so, with why (worded to follow "its python interpreter",
// as "ended with the background process"). A session of that name open now
// is not affected.
func (r *Registry) NoteLost(name, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost.add(name, loss{why: why})
}

// inheritLocked gives a new session what a closed one of its key lost;
// r.mu is held.
func (r *Registry) inheritLocked(s *session) {
	l, ok := r.lost.take(s.key)
	if !ok {
		return
	}
	if l.langs == nil {
		for lang := range r.cfg.Starters {
			l.langs = append(l.langs, lang)
		}
		slices.Sort(l.langs)
	}
	s.inherit(l)
}
