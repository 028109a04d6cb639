package streamsink

import (
	"bytes"
	"unicode/utf8"
)

// tail keeps the last maxBytes bytes and maxLines lines of sanitised text.
// A "\r" makes the next byte other than "\n" restart the current line, so
// progress bars keep only their final state. The kept text starts at the
// start of a line unless its first line is its last and alone longer than
// what is kept, and is the same however the text was split into writes.
type tail struct {
	maxBytes, maxLines int

	buf   []byte // visible text is buf[off:]
	off   int
	lines int  // newlines in buf[off:]
	cr    bool // a "\r" is pending

	totalNL      int64 // newlines ever written
	partial      bool  // the last byte written was not a newline
	droppedBytes int64 // bytes cut from the head
	droppedLines int64 // newlines cut from the head
	headCut      int64 // bytes cut from the head of the first kept line
}

// write appends sanitised text that may hold "\r".
func (t *tail) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\r')
		if i < 0 {
			t.text(p)
			return
		}
		t.text(p[:i])
		t.cr = true
		p = p[i+1:]
	}
}

// text appends sanitised text without "\r".
func (t *tail) text(p []byte) { t.textAfter(span{}, p) }

// textAfter appends a sanitised text without "\r" of which only the end,
// p, is at hand: head, what came before p, is empty, or else p is longer
// than the tail and so holds all that can be kept (see tailWriter).
func (t *tail) textAfter(head span, p []byte) {
	if len(p) == 0 {
		return
	}
	first := p[0]
	if head.n > 0 {
		first = head.first
	}
	if t.cr {
		t.cr = false
		if first != '\n' {
			t.restartLine()
		}
	}
	nl := bytes.Count(p, []byte{'\n'})
	t.totalNL += head.nl + int64(nl)
	t.partial = p[len(p)-1] != '\n'
	if head.n > 0 || len(p) >= t.maxBytes {
		p, nl = t.replaceAll(head, p, nl)
	}
	if t.off > 0 && t.off >= len(t.buf)-t.off {
		t.compact()
	}
	t.buf = append(t.buf, p...)
	t.lines += nl
	t.dropFragment()
	t.trimBytes()
	t.trimLines()
}

// dropFragment drops the first kept line when it is the end of a line cut
// at its head and another line follows it: only a last line keeps its end.
// A line cut by one write and ended by the next is then kept as one write
// of both would keep it, also when the line that follows fits beside it,
// or begins the next write.
func (t *tail) dropFragment() {
	if t.headCut == 0 || t.lines == 0 || t.lines == 1 && t.buf[len(t.buf)-1] == '\n' {
		return
	}
	t.cutHead(t.off + bytes.IndexByte(t.buf[t.off:], '\n') + 1)
}

// replaceAll drops the whole buffer and the head of the text head+p,
// which alone fills the tail; it returns the kept part of p and its
// newline count.
func (t *tail) replaceAll(head span, p []byte, nl int) ([]byte, int) {
	t.dropped(t.buf[t.off:], t.lines) // all of it: no need to count again
	t.buf, t.off, t.lines = t.buf[:0], 0, 0
	k := runeStart(p, len(p)-t.maxBytes)
	k = lineStart(p, k) // k > 0 when head is not empty: p[k-1] exists
	cut := bytes.Count(p[:k], []byte{'\n'})
	t.dropSpan(head.then(p[:k], cut))
	return p[k:], nl - cut
}

// lineStart moves a cut at p[k] that falls inside a line to the start of
// the next line, so no fragment of a line is kept, unless that line is the
// last one (a line longer than the tail keeps its end).
func lineStart(p []byte, k int) int {
	if k == 0 || k >= len(p) || p[k-1] == '\n' {
		return k
	}
	if j := bytes.IndexByte(p[k:], '\n'); j >= 0 && k+j+1 < len(p) {
		return k + j + 1
	}
	return k
}

// cutHead drops buf[t.off:k] from the head of the kept text.
func (t *tail) cutHead(k int) {
	gone := t.buf[t.off:k]
	nl := bytes.Count(gone, []byte{'\n'})
	t.dropped(gone, nl)
	t.lines -= nl
	t.off = k
}

// dropped accounts for text cut from the head that holds nl newlines.
func (t *tail) dropped(gone []byte, nl int) { t.dropSpan(span{}.then(gone, nl)) }

func (t *tail) dropSpan(gone span) {
	t.drop(gone.n, gone.nl)
	if gone.nl == 0 {
		t.headCut += gone.n // more of one long line
		return
	}
	t.headCut = gone.after
}

// span describes text a tail was not given: only counts, so that a long
// text written in pieces need not be held whole.
type span struct {
	n     int64 // bytes
	nl    int64 // newlines
	after int64 // bytes after its last newline (all of them without one)
	first byte  // its first byte, when n > 0
}

// then is the span of s followed by p, which holds nl newlines.
func (s span) then(p []byte, nl int) span {
	if len(p) == 0 {
		return s
	}
	if s.n == 0 {
		s.first = p[0]
	}
	s.n += int64(len(p))
	s.nl += int64(nl)
	if nl > 0 {
		s.after = int64(len(p) - (bytes.LastIndexByte(p, '\n') + 1))
	} else {
		s.after += int64(len(p))
	}
	return s
}

func (t *tail) drop(n, lines int64) {
	t.droppedBytes += n
	t.droppedLines += lines
}

func (t *tail) compact() {
	n := copy(t.buf, t.buf[t.off:])
	t.buf, t.off = t.buf[:n], 0
}

func (t *tail) trimBytes() {
	over := len(t.buf) - t.off - t.maxBytes
	if over <= 0 {
		return
	}
	k := t.off + runeStart(t.buf[t.off:], over)
	if t.lines > bytes.Count(t.buf[t.off:k], []byte{'\n'}) {
		// A newline follows the cut (tested first, so that a long line
		// written in small pieces is not searched at every write).
		k = t.off + lineStart(t.buf[t.off:], k-t.off)
	}
	t.cutHead(k)
}

func (t *tail) trimLines() {
	for t.visibleLines() > t.maxLines {
		i := bytes.IndexByte(t.buf[t.off:], '\n')
		t.cutHead(t.off + i + 1)
	}
}

func (t *tail) visibleLines() int {
	n := t.lines
	if len(t.buf) > t.off && t.buf[len(t.buf)-1] != '\n' {
		n++
	}
	return n
}

// restartLine erases the current (unterminated) line.
func (t *tail) restartLine() {
	i := bytes.LastIndexByte(t.buf[t.off:], '\n')
	t.buf = t.buf[:t.off+i+1]
	if i < 0 {
		t.headCut = 0 // the cut line is gone
	}
}

// truncated reports whether text was cut from the head.
func (t *tail) truncated() bool { return t.droppedBytes > 0 }

// totalLines counts lines ever written, an unterminated last line included.
func (t *tail) totalLines() int64 {
	if t.partial {
		return t.totalNL + 1
	}
	return t.totalNL
}

func (t *tail) visible() []byte { return t.buf[t.off:] }

// runeStart returns the first index >= i that starts a rune in p.
func runeStart(p []byte, i int) int {
	for i < len(p) && !utf8.RuneStart(p[i]) {
		i++
	}
	return i
}
