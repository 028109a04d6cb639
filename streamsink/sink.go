package streamsink

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/evalhost/evalhost/frames"
)

// maxScratch bounds the sanitising buffer a sink keeps between chunks.
const maxScratch = 1 << 20

// Sink is the output of one cell; see the package doc.
type Sink struct {
	opt Options

	mu       sync.Mutex
	san      [3]sanitizer // stdout, stderr, everything else
	fix      [3]utf8Fixer // the same streams, for Verbatim
	vscratch []byte       // Verbatim's fixed text, when not the chunk itself
	tail     tail
	spill    spill
	scratch  []byte
	dscratch [2][]byte // display text sanitised once and twice (recordText)
	run      []byte    // the tailWriter's run of a display text
	notices  []string
	payloads []Payload
	closed   bool
}

// New returns a sink; it fails only for invalid options.
func New(o Options) (*Sink, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	sp := spill{store: o.Store, hold: o.MaxBytes, cap: o.ArtifactCap}
	if o.NoSpill || o.Passthrough {
		sp.store = nil // the reader has every byte: count, keep nothing
	} else if lim := o.Store.ArtifactLimit(); lim > 0 && (sp.cap == 0 || sp.cap > lim) {
		sp.cap = max(lim, 64) // a head and a tail, however small the store's cap
	}
	return &Sink{
		opt:   o,
		tail:  tail{maxBytes: o.MaxBytes, maxLines: o.MaxLines},
		spill: sp,
	}, nil
}

func streamIndex(t frames.Type) int {
	switch t {
	case frames.TypeStdout:
		return 0
	case frames.TypeStderr:
		return 1
	}
	return 2
}

// Write passes a raw chunk of stream t (TypeStdout, TypeStderr; any other
// type shares a third stream) through the sink and returns its sanitised
// text for live forwarding. Bytes held back at the end of the chunk (half a
// UTF-8 sequence, a "\r" that may start a CRLF) come with the next chunk of
// the stream or from [Sink.Flush].
func (s *Sink) Write(t frames.Type, p []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.feed(t, p)
	if len(out) == len(p) && (len(p) == 0 || &out[0] == &p[0]) {
		return string(p)
	}
	return string(out)
}

// Append is Write that appends the sanitised text to dst instead of
// allocating a string.
func (s *Sink) Append(dst []byte, t frames.Type, p []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(dst, s.feed(t, p)...)
}

// Lend is Write without a copy: it returns p itself when p is clean (always
// with Options.Passthrough), else a buffer of the sink's that is valid until
// the next call. For a caller that writes the text on at once.
func (s *Sink) Lend(t frames.Type, p []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feed(t, p)
}

// writeString is Write for text that is already a string; clean text comes
// back as the same string, without a copy.
func (s *Sink) writeString(t frames.Type, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := bytesOf(text)
	out := s.feed(t, p)
	if len(out) == len(p) && (len(p) == 0 || &out[0] == &p[0]) {
		return text
	}
	return string(out)
}

// feed sanitises p and records it. The result is p itself when p is clean,
// else the scratch buffer, valid until the next call.
func (s *Sink) feed(t frames.Type, p []byte) []byte {
	i := streamIndex(t)
	if s.opt.Passthrough && i < 2 {
		s.spill.total += int64(len(p))
		return p
	}
	z := &s.san[i]
	out := p
	if !z.clean(p) {
		if cap(s.scratch) > maxScratch {
			s.scratch = nil
		}
		s.scratch = z.append(s.scratch[:0], p)
		out = s.scratch
	}
	s.record(p, out)
	if s.opt.Verbatim {
		return s.verbatim(i, p)
	}
	return out
}

// verbatim is p as Verbatim hands it back: p itself when it is UTF-8 and
// nothing is carried, else vscratch, valid until the next call.
func (s *Sink) verbatim(i int, p []byte) []byte {
	f := &s.fix[i]
	if f.n == 0 && utf8.Valid(p) {
		return p
	}
	if cap(s.vscratch) > maxScratch {
		s.vscratch = nil
	}
	s.vscratch = f.append(s.vscratch[:0], p)
	return s.vscratch
}

// record adds a raw chunk and its sanitised form to the tail and artifact.
func (s *Sink) record(raw, clean []byte) {
	if s.closed {
		return
	}
	s.tail.write(clean)
	s.spill.write(raw, s.tail.truncated())
}

// Flush ends stream t: held-back bytes are recorded and returned (an
// unfinished UTF-8 sequence as U+FFFD). Call it when a stream closes.
func (s *Sink) Flush(t frames.Type) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.flush(streamIndex(t)))
}

func (s *Sink) flush(i int) []byte {
	out := s.san[i].flush(nil)
	s.record(nil, out)
	if s.opt.Verbatim {
		return s.fix[i].flush(nil)
	}
	return out
}

// block records a whole text (traceback, display text) as lines of their
// own and returns its sanitised form.
func (s *Sink) block(text string) string {
	clean := Sanitize(text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tail.partial {
		s.record([]byte{'\n'}, []byte{'\n'})
	}
	s.record(bytesOf(text), bytesOf(clean))
	if !strings.HasSuffix(clean, "\n") && clean != "" {
		s.record([]byte{'\n'}, []byte{'\n'})
	}
	return clean
}

// note adds a notice line to the dump; callers hold s.mu.
func (s *Sink) note(msg string) { s.notices = append(s.notices, msg) }

// Close ends every stream and finishes the artifact. Later writes are
// sanitised and returned but no longer recorded. The error, if any, is
// also a notice in the Dump: the sink has already degraded to its tail, so
// callers may log it but must not fail the cell for it.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	for i := range s.san {
		s.flush(i)
	}
	if wideLine(s.tail.visible(), s.opt.MaxColumns) {
		// The Dump clamps this line, so the artifact must keep it whole;
		// while nothing was cut, the spill still holds every raw byte.
		s.spill.write(nil, true)
	}
	s.spill.close()
	s.closed = true
	s.scratch, s.vscratch, s.dscratch, s.run = nil, nil, [2][]byte{}, nil
	return s.spill.err
}
