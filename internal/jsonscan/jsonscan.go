package jsonscan

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// Object scans s, one JSON value with white space around it allowed. For an
// object it calls member with each member's key and value in order and
// reports true; for anything gjson.Valid rejects, or a value that is not an
// object, it reports false, and member may have been called for the members
// before the fault.
func Object(s string, member func(key string, value gjson.Result)) bool {
	i := space(s, 0)
	if i == len(s) || s[i] != '{' {
		return false
	}
	i, ok := object(s, i+1, member)
	return ok && space(s, i) == len(s)
}

// Array is Object for an array: elem gets each element in order.
func Array(s string, elem func(value gjson.Result)) bool {
	i := space(s, 0)
	if i == len(s) || s[i] != '[' {
		return false
	}
	i, ok := array(s, i+1, elem)
	return ok && space(s, i) == len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// space returns the index of the first byte at or after i that is not
// JSON white space.
func space(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// object scans an object's members from just after its '{' and returns the
// index after its '}'. member may be nil.
func object(s string, i int, member func(key string, value gjson.Result)) (int, bool) {
	i = space(s, i)
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	for {
		if i == len(s) || s[i] != '"' {
			return i, false
		}
		end, esc, ok := str(s, i+1)
		if !ok {
			return end, false
		}
		key := s[i:end]
		i = space(s, end)
		if i == len(s) || s[i] != ':' {
			return i, false
		}
		var v gjson.Result
		if i, v, ok = value(s, space(s, i+1), member != nil); !ok {
			return i, false
		}
		if member != nil {
			member(strValue(key, esc), v)
		}
		if i = space(s, i); i == len(s) {
			return i, false
		}
		switch s[i] {
		case '}':
			return i + 1, true
		case ',':
			i = space(s, i+1)
		default:
			return i, false
		}
	}
}

// array scans an array's elements from just after its '[' and returns the
// index after its ']'. elem may be nil.
func array(s string, i int, elem func(value gjson.Result)) (int, bool) {
	i = space(s, i)
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	for {
		var v gjson.Result
		var ok bool
		if i, v, ok = value(s, i, elem != nil); !ok {
			return i, false
		}
		if elem != nil {
			elem(v)
		}
		if i = space(s, i); i == len(s) {
			return i, false
		}
		switch s[i] {
		case ']':
			return i + 1, true
		case ',':
			i = space(s, i+1)
		default:
			return i, false
		}
	}
}

// value scans the value at s[i] and returns the index after it; with
// want, the value as gjson gives it.
func value(s string, i int, want bool) (int, gjson.Result, bool) {
	var r gjson.Result
	if i == len(s) {
		return i, r, false
	}
	start := i
	var ok bool
	switch c := s[i]; {
	case c == '{':
		i, ok = object(s, i+1, nil)
		r.Type = gjson.JSON
	case c == '[':
		i, ok = array(s, i+1, nil)
		r.Type = gjson.JSON
	case c == '"':
		var esc bool
		if i, esc, ok = str(s, i+1); ok && want {
			r.Type, r.Str = gjson.String, strValue(s[start:i], esc)
		}
	case c == '-' || c >= '0' && c <= '9':
		if i, ok = number(s, i); ok && want {
			r.Type = gjson.Number
			r.Num, _ = strconv.ParseFloat(s[start:i], 64)
		}
	default:
		i, r.Type, ok = literal(s, i)
	}
	if ok && want {
		r.Raw = s[start:i]
	}
	return i, r, ok
}

// str scans a string's text from just after its opening quote and returns
// the index after its closing quote, and whether it holds an escape.
func str(s string, i int) (end int, esc, ok bool) {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, esc, true
		case c < ' ':
			return i, esc, false
		case c == '\\':
			esc = true
			if i++; i == len(s) {
				return i, esc, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if i++; i == len(s) || !isHex(s[i]) {
						return i, esc, false
					}
				}
			default:
				return i, esc, false
			}
		}
	}
	return i, esc, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// strValue is a scanned string's text: its inside, or for one with escapes
// gjson's own reading of it.
func strValue(raw string, esc bool) string {
	if esc {
		return gjson.Parse(raw).Str
	}
	return raw[1 : len(raw)-1]
}

// number scans a number at s[i] as gjson.Valid does.
func number(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	switch {
	case i == len(s) || s[i] < '0' || s[i] > '9':
		return i, false
	case s[i] == '0':
		i++
	default:
		i = digits(s, i)
	}
	if i < len(s) && s[i] == '.' {
		if i++; i == len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = digits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if i++; i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = digits(s, i)
	}
	return i, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// literal scans true, false or null at s[i].
func literal(s string, i int) (int, gjson.Type, bool) {
	for _, l := range [...]struct {
		text string
		typ  gjson.Type
	}{{"true", gjson.True}, {"false", gjson.False}, {"null", gjson.Null}} {
		if len(s)-i >= len(l.text) && s[i:i+len(l.text)] == l.text {
			return i + len(l.text), l.typ, true
		}
	}
	return i, gjson.Null, false
}
