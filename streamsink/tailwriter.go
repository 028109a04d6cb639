package streamsink

import "bytes"

// tailWriter gives a tail one text in pieces and leaves it as one write of
// the whole text would: the tail keeps a text's end by rules that look at
// the text as a whole (a line cut at the head is dropped when a later line
// follows), so pieces written as they come could keep a different end.
// It holds the end of the text's current "\r"-free run, a little more
// than the tail keeps, and only counts the rest.
type tailWriter struct {
	t    *tail
	head span   // of the run, not held
	run  []byte // the rest of the run
}

// minRun is the least a tailWriter holds of a run before it counts its
// head away: small pieces then cost an append, not a count each. Tests
// lower it.
var minRun = 64 << 10

// write takes the next piece of the text.
func (w *tailWriter) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\r')
		if i < 0 {
			w.add(p)
			return
		}
		w.add(p[:i])
		w.end()
		w.t.cr = true
		p = p[i+1:]
	}
}

// close ends the text.
func (w *tailWriter) close() { w.end() }

func (w *tailWriter) end() {
	w.t.textAfter(w.head, w.run)
	w.head, w.run = span{}, w.run[:0]
}

// add appends to the run, keeping in hand only its last keep bytes once
// it is longer than the tail can keep.
func (w *tailWriter) add(p []byte) {
	keep := w.t.maxBytes + 1
	if len(w.run)+len(p) <= max(2*keep, minRun) {
		w.run = append(w.run, p...)
		return
	}
	if len(p) >= keep {
		w.skip(w.run)
		w.skip(p[:len(p)-keep])
		w.run = append(w.run[:0], p[len(p)-keep:]...)
		return
	}
	d := len(w.run) + len(p) - keep // < len(w.run)
	w.skip(w.run[:d])
	n := copy(w.run, w.run[d:])
	w.run = append(w.run[:n], p...)
}

func (w *tailWriter) skip(p []byte) {
	w.head = w.head.then(p, bytes.Count(p, []byte{'\n'}))
}
