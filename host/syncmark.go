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
	text   []byte // aliases the data given to split
	mark   string
	isMark bool
}

// markScanner splits a raw output stream into text and sync marks
// ("\x00\x1eEVH" + nonce + ":" + id + "\x1e\x00"). A mark may straddle reads,
// and so may a UTF-8 sequence; split reports how many trailing bytes must be
// carried to the front of the next read, so that a mark is seen whole and
// text segments never split a rune across two frames. The caller owns the
// carrying, which lets every segment alias the caller's read buffer.
type markScanner struct {
	prefix []byte
}

func newMarkScanner(nonce string) *markScanner {
	return &markScanner{prefix: []byte("\x00\x1eEVH" + nonce + ":")}
}

// split appends data's segments to segs and returns how many trailing bytes
// of data it left out: the start of a mark or of a rune still missing bytes
// (at most len(prefix)+maxMarkID+len(markTerm)). At the end of the stream
// those bytes are text.
func (s *markScanner) split(data []byte, segs []segment) ([]segment, int) {
	for len(data) > 0 {
		j := bytes.Index(data, s.prefix)
		if j < 0 {
			k := partialPrefix(data, s.prefix)
			if k == len(data) {
				k -= incompleteRuneTail(data)
			}
			return appendText(segs, data[:k]), len(data) - k
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
			return appendText(segs, data[:j]), len(data) - j
		}
		segs = appendText(segs, data[:j])
		segs = append(segs, segment{mark: string(data[start : start+t]), isMark: true})
		data = data[start+t+len(markTerm):]
	}
	return segs, 0
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
