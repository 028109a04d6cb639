package streamsink

import (
	"fmt"
	"os"

	"github.com/evalhost/evalhost/internal/plural"
)

// spill writes the raw stream to an artifact once the tail overflows. Until
// then it holds the raw bytes (at most hold of them, else it spills early)
// so the artifact can start from the first byte.
type spill struct {
	store *Store
	hold  int
	cap   int64 // 0: full artifact; else the head+tail bound, >= 64

	raw   []byte
	total int64 // raw bytes seen

	f       *os.File
	id      string
	path    string
	written int64

	ring    []byte // head+tail mode: the last bytes, circular
	ringPos int
	ringLen int

	cut    int64 // head+tail mode: raw bytes left out, known at close
	err    error // the first failure; spilling stopped
	closed bool
}

// write takes the next raw chunk; overflow says the tail no longer holds
// everything.
func (s *spill) write(p []byte, overflow bool) {
	s.total += int64(len(p))
	if s.store == nil || s.err != nil || s.closed {
		return
	}
	if s.f == nil {
		if !overflow && len(s.raw)+len(p) <= s.hold {
			s.raw = append(s.raw, p...)
			return
		}
		if !s.open() {
			return
		}
		held := s.raw
		s.raw = nil
		s.out(held)
	}
	s.out(p)
}

func (s *spill) open() bool {
	f, id, err := s.store.Create("eval.log")
	if err != nil {
		s.fail(err)
		return false
	}
	s.f, s.id, s.path = f, id, f.Name()
	return true
}

// ringSize is the tail a capped artifact keeps in memory.
func (s *spill) ringSize() int64 { return min(s.cap/2, maxRingHold) }

// out writes to the file, or with a cap to the head until it is full and
// to the ring after, which is made only then: most spills never fill a
// head, and a ring for each would cost every cell megabytes.
func (s *spill) out(p []byte) {
	if s.cap > 0 {
		head := s.cap - s.ringSize()
		n := int(min(int64(len(p)), max(head-s.written, 0)))
		s.put(p[:n])
		if n < len(p) {
			if s.ring == nil {
				s.ring = make([]byte, s.ringSize())
			}
			s.toRing(p[n:])
		}
		return
	}
	s.put(p)
}

func (s *spill) put(p []byte) {
	if len(p) == 0 || s.err != nil {
		return
	}
	n, err := s.f.Write(p)
	s.written += int64(n)
	if err != nil {
		s.fail(fmt.Errorf("streamsink: write artifact %s: %w", s.id, err))
	}
}

func (s *spill) toRing(p []byte) {
	if len(p) >= len(s.ring) {
		p = p[len(p)-len(s.ring):]
	}
	for len(p) > 0 {
		n := copy(s.ring[s.ringPos:], p)
		p = p[n:]
		s.ringPos = (s.ringPos + n) % len(s.ring)
		s.ringLen = min(s.ringLen+n, len(s.ring))
	}
}

// close finishes the artifact: the marker and the ring in head+tail mode.
func (s *spill) close() {
	if s.closed {
		return
	}
	s.closed = true
	s.raw = nil
	if s.f == nil {
		return
	}
	// A put that fails drops the ring (fail): the rest reads this copy,
	// and writes nothing more.
	if ring := s.ring; s.ringLen > 0 {
		head := s.written
		if e := s.total - head - int64(s.ringLen); e > 0 {
			s.cut = e
			s.put(fmt.Appendf(nil, "\n[ARTIFACT TRUNCATED: %s elided; kept the first %d and the last %d of %d bytes]\n",
				plural.Of(e, "byte"), head, s.ringLen, s.total))
		}
		start := (s.ringPos - s.ringLen + len(ring)) % len(ring)
		if start+s.ringLen <= len(ring) {
			s.put(ring[start : start+s.ringLen])
		} else {
			s.put(ring[start:])
			s.put(ring[:s.ringPos])
		}
	}
	s.ring = nil
	if s.f == nil {
		return // a write failed: fail removed the artifact
	}
	if err := s.f.Close(); err != nil && s.err == nil {
		s.fail(fmt.Errorf("streamsink: close artifact %s: %w", s.id, err))
	}
	s.f = nil
	if s.id != "" {
		// Enforces the store's limits now that this artifact is whole; a
		// failed clean-up costs disk, not this cell's output.
		_ = s.store.Finish(s.id)
	}
}

// fail stops spilling; a partial artifact is removed, since it would
// claim to be the whole output.
func (s *spill) fail(err error) {
	if s.err != nil {
		return
	}
	s.err = err
	s.raw, s.ring = nil, nil
	if s.f != nil {
		s.f.Close()
		os.Remove(s.path)
		s.f = nil
		_ = s.store.Finish(s.id)
	}
	s.id, s.path = "", ""
}
