package sessions

import (
	"math"
	"slices"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// State loss told to whoever relied on it.
//
// A session counts events (epoch): each loss of a language's state, and
// each start of an interpreter after a loss nobody was told of. A request
// notes the epoch when it is queued. A loss tells the requests queued
// before it (they relied on the state it ended), not later ones, unless it
// is pending: no request caused or saw it (an interpreter that ended
// between cells, a session evicted or idle-closed and opened again, the
// background process's end). A pending loss tells every request queued
// before the next interpreter of its language starts. A request is never
// told of a loss its own cell caused (the cell said so), and a loss someone
// asked for (Reset, KillSession, CloseSession) tells only the requests
// queued before it.

// langLoss is the last loss of one language's state in a session.
type langLoss struct {
	tellBefore uint64 // requests queued before this epoch are told; pending: all until the next start
	why        string // follows "its py interpreter"
}

const pending = math.MaxUint64

// ownLoss marks a language whose state the request's own cell ended.
const ownLoss = math.MaxUint64

// langSeen is the epoch up to which a request knows one language's losses.
type langSeen struct {
	lang  string
	epoch uint64
}

// Why a session's state went, after "its py interpreter". Others' losses
// are news only to other requests, hence "another request's cell".
const (
	whyEndedBetween = "ended between cells (its process exited or was killed)"
	whyKilled       = "was killed by a second interrupt (Ctrl-C)"
	whyReset        = "was reset"
	whyResetCell    = "was reset by another request's cell"
	whyClosed       = "was closed"
	whyStopped      = "was killed: another request's cell was stopped and did not end within the grace window"
)

// lostLocked records that lang's state went as why says; s.mu is held. A
// language that never had an interpreter had no state to lose.
func (s *session) lostLocked(lang, why string, isPending bool) {
	if !s.ever[lang] {
		return
	}
	s.epoch++
	l := langLoss{tellBefore: s.epoch, why: why}
	if isPending {
		l.tellBefore = pending
	}
	s.losses[lang] = l
}

// startedLocked records a new interpreter of lang; s.mu is held. A pending
// loss stops telling the requests queued from now on.
func (s *session) startedLocked(lang string) {
	s.ever[lang] = true
	if l, ok := s.losses[lang]; ok && l.tellBefore == pending {
		s.epoch++
		l.tellBefore = s.epoch
		s.losses[lang] = l
	}
}

// lossFor is what a request that knows lang's losses up to seen has not
// been told, and the session's epoch now.
func (s *session) lossFor(lang string, seen uint64) (why string, now uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.losses[lang]; ok && seen < l.tellBefore && seen != ownLoss {
		why = l.why
	}
	return why, s.epoch
}

// untold is what the session holds, by language: the live state (why "")
// and the pending losses, which go to a session opened again under its key.
func (s *session) untold() []Loss {
	s.mu.Lock()
	defer s.mu.Unlock()
	byWhy := map[string][]string{}
	for lang := range s.ever {
		why, held := "", false
		switch ex := s.execs[lang]; {
		case s.losses[lang].tellBefore == pending:
			why, held = s.losses[lang].why, true
		case ex != nil && ex.Alive():
			held = true
		case ex != nil:
			why, held = whyEndedBetween, true
		}
		if held {
			byWhy[why] = append(byWhy[why], lang)
		}
	}
	var out []Loss
	for why, langs := range byWhy {
		slices.Sort(langs)
		out = append(out, Loss{Key: s.key, Languages: langs, Why: why})
	}
	// The live state ("") first, then by reason: rememberLocked relies on it.
	slices.SortFunc(out, func(a, b Loss) int { return strings.Compare(a.Why, b.Why) })
	return out
}

// inherit starts a session opened again where a closed one held state:
// each language's first interpreter is news to the requests queued before
// it starts.
func (s *session) inherit(l Loss) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lang := range l.Languages {
		s.ever[lang] = true
		s.losses[lang] = langLoss{tellBefore: pending, why: l.Why}
	}
}

// seenFor is the epoch up to which the job knows lang's losses.
func (j *Job) seenFor(lang string) uint64 {
	for _, g := range j.turn.langs {
		if g.lang == lang {
			return g.epoch
		}
	}
	return j.turn.epoch
}

// see records that the job knows lang's losses up to epoch.
func (j *Job) see(lang string, epoch uint64) {
	for i := range j.turn.langs {
		if j.turn.langs[i].lang == lang {
			j.turn.langs[i].epoch = epoch
			return
		}
	}
	j.turn.langs = append(j.turn.langs, langSeen{lang, epoch})
}

// lostAll records that the job's own cell ended every interpreter of its
// session (a reset).
func (j *Job) lostAll() {
	j.s.mu.Lock()
	langs := make([]string, 0, len(j.s.ever))
	for lang := range j.s.ever {
		langs = append(langs, lang)
	}
	j.s.mu.Unlock()
	for _, lang := range langs {
		j.see(lang, ownLoss)
	}
}

// tellLoss says, once, that the state the cell's request relied on was
// ended by someone else; it runs when the cell's executor is ready.
func (c *cellRun) tellLoss() {
	lang := c.cell.Language
	why, now := c.j.s.lossFor(lang, c.j.seenFor(lang))
	c.j.see(lang, now)
	if why == "" {
		return
	}
	c.markLost(false)
	c.notice("[state lost: session " + trustdir.Shown(c.j.s.key.Session) + "'s " + lang + " interpreter " + why +
		"; this cell runs in a fresh one, and variables from before are gone]\n")
}

// Loss is a session's state by language: live (Why "") or gone for a
// reason no request was told yet (Why follows "its py interpreter", as
// "ended with the background process").
type Loss struct {
	Key       Key      `json:"key"`
	Languages []string `json:"languages"`
	Why       string   `json:"why,omitempty"`
}

// maxLosses bounds the closed sessions a registry remembers; the oldest is
// forgotten first.
const maxLosses = 256

// lossMemory remembers why closed sessions' state went, for the session
// opened again under the same key.
type lossMemory struct {
	byKey map[Key]Loss
	order []Key // oldest first, each key once
}

// add keeps l; for a key already kept, the languages are joined and the
// newer reason stands.
func (m *lossMemory) add(l Loss) {
	if m.byKey == nil {
		m.byKey = map[Key]Loss{}
	}
	if old, ok := m.byKey[l.Key]; ok {
		m.order = slices.DeleteFunc(m.order, func(k Key) bool { return k == l.Key })
		langs := append(slices.Clone(old.Languages), l.Languages...)
		slices.Sort(langs)
		l.Languages = slices.Compact(langs)
	}
	m.byKey[l.Key] = l
	m.order = append(m.order, l.Key)
	if len(m.order) > maxLosses {
		delete(m.byKey, m.order[0])
		m.order = slices.Delete(m.order, 0, 1)
	}
}

// take returns and forgets what is remembered for key.
func (m *lossMemory) take(key Key) (Loss, bool) {
	l, ok := m.byKey[key]
	if ok {
		delete(m.byKey, key)
		m.order = slices.DeleteFunc(m.order, func(k Key) bool { return k == key })
	}
	return l, ok
}

// rememberLocked keeps why s's state went, for the session opened again
// under its key; r.mu is held. Only pending losses are kept: a session its
// user closed is no news when opened again.
func (r *Registry) rememberLocked(s *session, why string) {
	held := s.untold() // the live state first: the close is the newer reason
	for i := len(held) - 1; i >= 0; i-- {
		if held[i].Why == "" {
			held[i].Why = why
		}
		r.lost.add(held[i])
	}
}

// NoteLost tells the registry that the state of session l.Key went with
// something outside it (the background process that held it ended): the
// first cells of l.Languages that run in that session say so, with l.Why.
// A session of that key open now is not affected.
func (r *Registry) NoteLost(l Loss) {
	if l.Why == "" || len(l.Languages) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost.add(l)
}

// Untold lists what the registry's sessions hold and what it was not yet
// able to tell: each live session's state (Why "") and its pending losses,
// and the remembered losses of closed ones. A background process that ends
// hands it to the next one (NoteLost), having filled in Why.
func (r *Registry) Untold() []Loss {
	r.mu.Lock()
	list := make([]*session, 0, len(r.sessions))
	for _, s := range r.sessions {
		list = append(list, s)
	}
	out := make([]Loss, 0, len(r.lost.order))
	for _, k := range r.lost.order {
		out = append(out, r.lost.byKey[k])
	}
	r.mu.Unlock()
	for _, s := range list {
		out = append(out, s.untold()...)
	}
	return out
}

// inheritLocked gives a new session what a closed one of its key lost;
// r.mu is held.
func (r *Registry) inheritLocked(s *session) {
	if l, ok := r.lost.take(s.key); ok {
		s.inherit(l)
	}
}
