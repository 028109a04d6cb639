package params

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyValue renders v as papermill's PythonTranslator.translate does.
func pyValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case *big.Int:
		return v.String()
	case float64:
		switch {
		case math.IsNaN(v):
			return "float('nan')"
		case math.IsInf(v, -1):
			return "float('-inf')"
		case math.IsInf(v, 1):
			return "float('inf')"
		}
		return pyFloatRepr(v)
	case string:
		return pyString(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = pyValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Map:
		parts := make([]string, len(v))
		for i, kv := range v {
			parts[i] = pyKey(kv.Key) + ": " + pyValue(kv.Value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return pyString(fmt.Sprint(v))
}

// pyKey is translate_str of a dict key: a string escaped, anything else
// its str() in double quotes.
func pyKey(k any) string {
	if s, ok := k.(string); ok {
		return pyString(s)
	}
	return `"` + pyStr(k) + `"`
}

// pyStr is Python's str() of a scalar.
func pyStr(v any) string {
	if f, ok := v.(float64); ok {
		switch {
		case math.IsNaN(f):
			return "nan"
		case math.IsInf(f, 1):
			return "inf"
		case math.IsInf(f, -1):
			return "-inf"
		}
		return pyFloatRepr(f)
	}
	return pyValue(v)
}

// pyFloatRepr is Python's repr of a finite float: the shortest digits
// that read back, fixed notation for exponents -4..15 (with ".0" when
// whole), else d.ddde+XX.
func pyFloatRepr(f float64) string {
	exp := 0
	if f != 0 {
		e := strconv.FormatFloat(f, 'e', -1, 64)
		exp, _ = strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	}
	if exp < -4 || exp >= 16 {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyString is papermill's translate_escaped_str: the text through
// Python's unicode_escape codec, double quotes escaped, in double quotes.
// A byte that is not UTF-8 is the lone surrogate Python's argv decoding
// makes of it.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '"':
			b.WriteString(`\"`)
		case r < 0x20 || r >= 0x7f && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x10000:
			fmt.Fprintf(&b, `\U%08x`, r)
		case r >= 0x100:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
