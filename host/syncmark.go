package host

import (
	"bytes"
	"unicode/utf8"
)

// markTerm ends a sync mark; the id sits between the prefix and it.
const markTerm = "\x1e\x00"

// maxMarkID bounds the id of a sync mark. A prefix followed by more than this
// many bytes without the terminator is not a mark, so held-back bytes stay
// bounded whatever user code writes.
const maxMarkID = 256

// segment is one piece of a raw stream: text, or a sync mark with its id.
type segment struct {
	text   []byte // aliases scanner or caller memory until the next Feed
	mark   string
	isMark bool
}

// markScanner splits a raw output stream into text and sync marks
// ("\x00\x1eEVH" + nonce + ":" + id + "\x1e\x00"). A mark may straddle reads,
// so a trailing partial mark is held back until the next Feed, as is an
// incomplete trailing UTF-8 sequence, so that text segments never split a rune
// across two frames.
type markScanner struct {
	prefix []byte
	held   []byte
	buf    []byte
}

func newMarkScanner(nonce string) *markScanner {
	return &markScanner{prefix: []byte("\x00\x1eEVH" + nonce + ":")}
}

// Feed scans p (after whatever was held back) and appends its segments to
// segs. The segments alias memory that is valid until the next call.
func (s *markScanner) Feed(p []byte, segs []segment) []segment {
	data := p
	if len(s.held) > 0 {
		s.buf = append(append(s.buf[:0], s.held...), p...)
		data = s.buf
	}
	s.held = s.held[:0]
	for len(data) > 0 {
		j := bytes.Index(data, s.prefix)
		if j < 0 {
			k := partialPrefix(data, s.prefix)
			text := data[:k]
			if k == len(data) {
				k -= incompleteRuneTail(text)
				text = data[:k]
			}
			segs = appendText(segs, text)
			s.hold(data[k:])
			return segs
		}
		start := j + len(s.prefix)
		t := bytes.Index(data[start:min(len(data), start+maxMarkID+len(markTerm))], []byte(markTerm))
		if t < 0 {
			if len(data)-start >= maxMarkID+len(markTerm) {
				// Too long to be a mark: the prefix's first byte is text.
				segs = appendText(segs, data[:j+1])
				data = data[j+1:]
				continue
			}
			segs = appendText(segs, data[:j])
			s.hold(data[j:])
			return segs
		}
		segs = appendText(segs, data[:j])
		segs = append(segs, segment{mark: string(data[start : start+t]), isMark: true})
		data = data[start+t+len(markTerm):]
	}
	return segs
}

// Flush returns what is held back, as text, at the end of the stream.
func (s *markScanner) Flush() []byte {
	h := s.held
	s.held = nil
	return h
}

// hold keeps b for the next Feed; b may alias s.buf, so copy through a
// separate slice.
func (s *markScanner) hold(b []byte) {
	s.held = append(s.held[:0], b...)
}

func appendText(segs []segment, b []byte) []segment {
	if len(b) == 0 {
		return segs
	}
	return append(segs, segment{text: b})
}

// partialPrefix returns where the longest suffix of data that is a proper
// prefix of prefix starts, or len(data) when there is none.
func partialPrefix(data, prefix []byte) int {
	from := max(0, len(data)-len(prefix)+1)
	for i := from; i < len(data); i++ {
		if data[i] == prefix[0] && bytes.HasPrefix(prefix, data[i:]) {
			return i
		}
	}
	return len(data)
}

// incompleteRuneTail returns how many trailing bytes of b are the start of a
// UTF-8 sequence still missing bytes (0..3).
func incompleteRuneTail(b []byte) int {
	for n := 1; n <= utf8.UTFMax-1 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
