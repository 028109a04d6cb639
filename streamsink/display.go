package streamsink

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/evalhost/evalhost/frames"
)

// displayFrame sanitises a display's text/plain and text/markdown and
// records the one a renderer shows, or the text of its HTML when neither
// is a string or the one there is empty. A display can be hundreds of
// megabytes of text: each text is read a piece at a time (frames.Pieces)
// and never held decoded, and a sanitised copy is made, as a new JSON
// value, only when sanitising changes it. The frame, the tail and the
// artifact are byte for byte what sanitising and recording the whole
// decoded texts would make of them (see block).
func (s *Sink) displayFrame(f frames.Frame) frames.Frame {
	f = s.moveLarge(f)
	mimes := [2]string{"text/plain", "text/markdown"}
	var texts [2]frames.TextPieces
	var ok [2]bool
	for i, mime := range mimes {
		texts[i], ok[i] = f.Bundle.Pieces(mime)
	}
	shown := -1 // the one a renderer shows (frames.Bundle.DisplayMIME)
	switch f.Bundle.DisplayMIME() {
	case mimes[0]:
		shown = 0
	case mimes[1]:
		shown = 1
	case "text/html":
		s.recordHTML(f.Bundle)
	}
	if s.opt.Verbatim {
		if shown >= 0 {
			s.recordText(texts[shown], true)
		}
		return f
	}
	cloned := false
	for i, mime := range mimes {
		if !ok[i] {
			continue
		}
		var changed bool
		if i == shown {
			changed = s.recordText(texts[i], false)
		} else {
			changed = sanitizingChanges(texts[i])
		}
		if !changed {
			continue
		}
		if !cloned {
			f.Bundle, cloned = maps.Clone(f.Bundle), true
		}
		f.Bundle[mime] = sanitizedValue(texts[i])
	}
	return f
}

// recordHTML records a display that has no text/markdown or text/plain
// string but an empty one (display(bundle, raw=True) sends any JSON value,
// and "" for text/plain when the bundle had none) as a renderer
// shows it (frames.Bundle.DisplayText): its HTML's text, sanitised as
// display text is, and with Verbatim as it came in the artifact. The HTML
// itself stays as it came. It is decoded whole, so HTML larger than the
// inline limit (DefaultInlineLimit when all stays inline) is only named:
// with a store, such HTML was moved and text/plain names it; where it
// stayed (a notebook's sink, no store, a failed write) its text cost up
// to fourteen times its size.
func (s *Sink) recordHTML(b frames.Bundle) {
	limit := s.opt.InlineLimit
	if limit < 0 {
		limit = DefaultInlineLimit
	}
	if raw := b["text/html"]; len(raw) > limit {
		if _, ok := frames.TextPiecesOf(raw); ok {
			s.block(namedHTML(raw))
		}
		return
	}
	html, ok := b.Text("text/html")
	if !ok {
		return
	}
	text := frames.HTMLToText(html)
	if !s.opt.Verbatim {
		text = Sanitize(text) // what recordText gives block: the text sanitised
	}
	s.block(text)
}

// namedHTML is what is shown of HTML above the inline limit: its size.
func namedHTML(raw json.RawMessage) string {
	return fmt.Sprintf("[text/html %s]", humanBytes(int64(len(raw))))
}

// DisplayText is the text a renderer shows of a display
// ([frames.Bundle.DisplayMIME]'s), sanitised as [Sanitize] sanitises: the
// text a sink records of it, for a terminal. Its HTML's text needs it most:
// a sink leaves HTML as it came, and an entity (&#27;) in it decodes to an
// escape. [frames.Bundle.DisplayText] only drops such a sequence's control
// bytes, and what follows them (an OSC 52's "]52;c;…") would be shown.
// HTML above DefaultInlineLimit is named as a sink's dump names it, not
// decoded: its text would cost up to fourteen times its size.
func DisplayText(b frames.Bundle) string {
	mime := b.DisplayMIME()
	if raw := b[mime]; mime == "text/html" && len(raw) > DefaultInlineLimit {
		return namedHTML(raw)
	}
	text, _ := b.Text(mime)
	if mime == "text/html" {
		text = frames.HTMLToText(text)
	}
	return Sanitize(text)
}

// sanitizingChanges reports whether Sanitize changes the text.
func sanitizingChanges(text frames.TextPieces) bool {
	var q sanPieces
	var same sameness
	for piece := text.Next(); piece != nil && !same.differ; piece = text.Next() {
		for in, out, ok := q.next(piece); ok; in, out, ok = q.next(nil) {
			same.see(in, out)
		}
	}
	same.see(nil, q.z.flush(q.buf[:0]))
	return !same.same()
}

// sanitizedValue is the JSON value of the sanitised text. Its room is
// made once, at a bound (append would grow a value that escaping makes
// larger than the text many times over, 3x its size at the peak), and a
// value much smaller than its room is copied out of it: the frame carries
// it.
func sanitizedValue(text frames.TextPieces) json.RawMessage {
	var v frames.TextValue
	v.Grow(text.MaxValueLen())
	var q sanPieces
	for piece := text.Next(); piece != nil; piece = text.Next() {
		for _, out, ok := q.next(piece); ok; _, out, ok = q.next(nil) {
			v.Write(out)
		}
	}
	v.Write(q.z.flush(q.buf[:0]))
	return fitted(v.Value())
}

// fitted is a new value made in room at a bound, copied out of it when it
// is much smaller: the frame carries it.
func fitted(value json.RawMessage) json.RawMessage {
	if cap(value) > 2*len(value) {
		return bytes.Clone(value)
	}
	return value
}

// recordText records a display text as block records a whole one, and
// reports whether sanitising changes it. What block is given is, without
// Verbatim, the text already sanitised: the artifact then gets the
// sanitised text, and the tail that sanitised again.
func (s *Sink) recordText(text frames.TextPieces, verbatim bool) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return !verbatim && sanitizingChanges(text)
	}
	if s.tail.partial {
		s.record([]byte{'\n'}, []byte{'\n'})
	}
	first := text.Next()
	if text.Done() && plainPrefix(first) == len(first) {
		// Most displays: a short text that sanitising leaves as it is,
		// recorded as block records it, without the pieces' machinery.
		s.record(first, first)
		if len(first) > 0 && first[len(first)-1] != '\n' {
			s.record([]byte{'\n'}, []byte{'\n'})
		}
		return false
	}
	r := textRecord{s: s, verbatim: verbatim, tw: tailWriter{t: &s.tail, run: s.run[:0]}}
	r.q1.buf, r.q2.buf = s.dscratch[0][:0], s.dscratch[1][:0]
	for piece := first; piece != nil; piece = text.Next() {
		for in, out, ok := r.q1.next(piece); ok; in, out, ok = r.q1.next(nil) {
			r.stage1(in, out)
		}
	}
	r.stage1(nil, r.q1.z.flush(r.q1.buf[:0]))
	if !verbatim {
		r.toTail(r.q2.z.flush(r.q2.buf[:0]))
	}
	r.tw.close()
	s.spill.write(nil, s.tail.truncated())
	if r.any && r.last != '\n' {
		s.record([]byte{'\n'}, []byte{'\n'})
	}
	s.run = keepScratch(r.tw.run)
	s.dscratch = [2][]byte{keepScratch(r.q1.buf), keepScratch(r.q2.buf)}
	return !r.same.same()
}

func keepScratch(b []byte) []byte {
	if cap(b) > maxScratch {
		return nil
	}
	return b[:0]
}

// textRecord carries one display text, a piece at a time, through the
// sanitiser (twice without Verbatim, as block sanitises the sanitised
// text) into the artifact and the tail.
type textRecord struct {
	s        *Sink
	verbatim bool
	q1, q2   sanPieces
	same     sameness
	tw       tailWriter
	last     byte // of the text the tail got
	any      bool
}

// stage1 takes a piece of the text and its sanitised form.
func (r *textRecord) stage1(in, out []byte) {
	r.same.see(in, out)
	if r.verbatim {
		r.s.spill.write(in, false)
		r.toTail(out)
		return
	}
	r.s.spill.write(out, false)
	for _, out2, ok := r.q2.next(out); ok; _, out2, ok = r.q2.next(nil) {
		r.toTail(out2)
	}
}

func (r *textRecord) toTail(p []byte) {
	if len(p) == 0 {
		return
	}
	r.last, r.any = p[len(p)-1], true
	r.tw.write(p)
}

// sanPiece bounds the piece of a text that a sanPieces sanitises at once.
// Tests lower it.
var sanPiece = 64 << 10

// sanPieces sanitises a text a piece at a time: a run that passes
// unchanged is handed back as itself, however long, and the rest in
// sanitised pieces of at most sanPiece bytes of input.
type sanPieces struct {
	z   sanitizer
	p   []byte // what is left of the piece next was given
	buf []byte
}

// next starts on p when p is not nil, and returns the next piece of it
// and its sanitised form (valid until the next call); false when p is
// used up.
func (q *sanPieces) next(p []byte) (in, out []byte, ok bool) {
	if p != nil {
		q.p = p
	}
	if len(q.p) == 0 {
		return nil, nil, false
	}
	if q.z.state == ground && q.z.ncarry == 0 && !q.z.cr {
		if n := plainPrefix(q.p); n > 0 {
			in, q.p = q.p[:n], q.p[n:]
			return in, in, true
		}
	}
	n := min(len(q.p), sanPiece)
	in, q.p = q.p[:n], q.p[n:]
	q.buf = q.z.append(q.buf[:0], in)
	return in, q.buf, true
}

// sameness tells whether a sanitiser's output is its input, seen a piece
// at a time. The output lags by what the sanitiser holds back (a "\r",
// the start of a rune), never by more than pend while the two are equal:
// anything else it holds is an escape sequence, which it drops.
type sameness struct {
	pend   [8]byte // input not yet matched by output
	n      int
	differ bool
}

func (d *sameness) see(in, out []byte) {
	if d.differ || d.n == 0 && len(in) == len(out) && (len(in) == 0 || &in[0] == &out[0]) {
		return
	}
	k := min(len(out), d.n)
	if string(out[:k]) != string(d.pend[:k]) {
		d.differ = true
		return
	}
	out = out[k:]
	rest := d.pend[k:d.n]
	if len(rest) > 0 { // the output ended within pend
		if len(rest)+len(in) > len(d.pend) {
			d.differ = true
			return
		}
		d.n = copy(d.pend[:], rest)
		d.n += copy(d.pend[d.n:], in)
		return
	}
	if len(out) > len(in) || string(out) != string(in[:len(out)]) || len(in)-len(out) > len(d.pend) {
		d.differ = true
		return
	}
	d.n = copy(d.pend[:], in[len(out):])
}

// same reports, once the sanitiser is flushed, whether the output was the
// input.
func (d *sameness) same() bool { return !d.differ && d.n == 0 }
