package mcp

import (
	"bytes"
	"encoding/json"
)

// maxIDBytes bounds the raw id an over-long request is answered under; a
// longer one is not read (it would be echoed back whole).
const maxIDBytes = 1024

// memberScan reads, in one pass over a line handed to it in pieces, what
// an over-long request needs to be answered: its top-level "id" (the last,
// as the SDK's decoder takes it) and whether it has a "method". The line
// is not kept. The TypeScript SDK's client writes a request's id after its
// params ({...request, jsonrpc: "2.0", id}), so a long call's id comes at
// its end, far past any prefix: read from a prefix, the call was dropped
// unanswered and the client waited for its timeout. Brackets and quotes
// are counted as nestsDeeper counts them; a line that is not one JSON
// object may give no id, never a wrong one from inside a string or a
// nested value.
type memberScan struct {
	started, done  bool
	depth          int
	inString, esc  bool
	inValue        bool   // at depth 1, between a member's ':' and its end
	key            []byte // the current top-level key, raw (a few bytes)
	keyOver        bool   // the key is longer than any we look for
	readingKey     bool
	value          []byte // the current top-level id's raw value
	valueOver      bool
	isID, isMethod bool // the current member is "id", "method"
	id             []byte
	method         bool
}

// feed scans the next piece of the line.
func (s *memberScan) feed(p []byte) {
	for i := 0; i < len(p) && !s.done; i++ {
		b := p[i]
		if s.inString {
			if !s.esc && !s.readingKey && !s.capturing() {
				// Skip to the string's next quote or escape: long strings
				// (a cell's code) are most of such a line.
				j := bytes.IndexAny(p[i:], `"\`)
				if j < 0 {
					return
				}
				i += j
				b = p[i]
			}
			s.keep(b)
			switch {
			case s.esc:
				s.esc = false
			case b == '\\':
				s.esc = true
			case b == '"':
				s.inString = false
				s.readingKey = false
			}
			continue
		}
		s.byteOutside(b)
	}
}

// byteOutside scans b, outside every string.
func (s *memberScan) byteOutside(b byte) {
	if !s.started {
		if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
			return
		}
		s.started, s.depth = true, 1
		s.done = b != '{' // an array (a batch) or no JSON: no id to read
		return
	}
	if s.capturing() && (b == ' ' || b == '\t' || b == '\r' || b == '\n') {
		// Whitespace around the id takes no room: none before it, a run
		// after it kept as one space (so that "1 2" stays no number).
		if n := len(s.value); n > 0 && s.value[n-1] != ' ' {
			s.keep(' ')
		}
		return
	}
	if s.depth == 1 {
		switch {
		case b == ',' || b == '}':
			s.endMember()
			if b == '}' {
				s.done = true
			}
			return
		case b == ':' && !s.inValue:
			s.inValue = true
			s.isID = !s.keyOver && string(s.key) == `"id"`
			s.isMethod = !s.keyOver && string(s.key) == `"method"`
			s.value, s.valueOver = s.value[:0], false
			return
		case b == '"' && !s.inValue:
			s.key, s.keyOver, s.readingKey = s.key[:0], false, true
			s.inString = true
			s.keep(b)
			return
		}
	}
	s.keep(b)
	switch b {
	case '"':
		s.inString = true
	case '{', '[':
		s.depth++
	case '}', ']':
		s.depth--
	}
}

// capturing reports whether the bytes scanned now are the id's value.
func (s *memberScan) capturing() bool { return s.inValue && s.isID && !s.valueOver }

// keep adds b to the key or the id's value being read.
func (s *memberScan) keep(b byte) {
	switch {
	case s.readingKey && !s.keyOver:
		if s.key = append(s.key, b); len(s.key) > len(`"method"`) {
			s.keyOver = true
		}
	case s.capturing():
		if s.value = append(s.value, b); len(s.value) > maxIDBytes {
			s.valueOver = true
		}
	}
}

// endMember ends the top-level member being read, at its ',' or '}'.
func (s *memberScan) endMember() {
	if !s.inValue {
		return
	}
	switch {
	case s.isMethod:
		s.method = true
	case s.isID:
		// The last id counts, whatever it is: an unusable one (null, an
		// object, one too long) leaves none, as the decoder would.
		s.id = nil
		v := bytes.TrimSpace(s.value)
		if !s.valueOver && len(v) > 0 && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') && json.Valid(v) {
			s.id = append([]byte(nil), v...)
		}
	}
	s.inValue, s.isID, s.isMethod = false, false, false
}

// request returns the raw id of the line scanned, a request (a method and
// a string or number id), or false: a notification, a response, or a line
// whose id cannot be read.
func (s *memberScan) request() (string, bool) {
	if s.id == nil || !s.method {
		return "", false
	}
	return string(s.id), true
}
