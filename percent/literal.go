package percent

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errLiteral is a metadata value that is neither JSON nor a Python literal.
var errLiteral = errors.New("not a JSON or Python literal")

// parseLiteral reads a marker's metadata value as Jupytext does
// (json.loads, then ast.literal_eval): strings in either quote, numbers,
// true/false/null and True/False/None, lists, tuples (as lists) and
// dicts. The whole text must be one value.
func parseLiteral(text string) (any, error) {
	p := &literalParser{s: strings.TrimSpace(text)}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, errLiteral
	}
	return v, nil
}

type literalParser struct {
	s string
	i int
}

func (p *literalParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *literalParser) value(depth int) (any, error) {
	p.space()
	if p.i >= len(p.s) || depth > 64 {
		return nil, errLiteral
	}
	switch c := p.s[p.i]; {
	case c == '"' || c == '\'':
		return p.str()
	case c == '[':
		return p.list(']', depth)
	case c == '(':
		return p.list(')', depth)
	case c == '{':
		return p.dict(depth)
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for word, v := range map[string]any{"true": true, "True": true, "false": false, "False": false, "null": nil, "None": nil} {
		if strings.HasPrefix(p.s[p.i:], word) && !identByte(p.s, p.i+len(word)) {
			p.i += len(word)
			return v, nil
		}
	}
	return nil, errLiteral
}

func identByte(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (p *literalParser) str() (any, error) {
	quote := p.s[p.i]
	var b strings.Builder
	for j := p.i + 1; j < len(p.s); {
		c := p.s[j]
		switch {
		case c == quote:
			p.i = j + 1
			return b.String(), nil
		case c == '\n':
			return nil, errLiteral
		case c == '\\':
			v, mb, tail, err := strconv.UnquoteChar(p.s[j:], quote)
			if err != nil {
				return nil, errLiteral
			}
			if v < utf8.RuneSelf || !mb {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(v)
			}
			j = len(p.s) - len(tail)
		default:
			b.WriteByte(c)
			j++
		}
	}
	return nil, errLiteral
}

func (p *literalParser) list(end byte, depth int) (any, error) {
	p.i++
	out := []any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if !p.sep(end) {
			return nil, errLiteral
		}
	}
}

// sep consumes a "," or sees the closing byte.
func (p *literalParser) sep(end byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		return true
	}
	return p.i < len(p.s) && p.s[p.i] == end
}

func (p *literalParser) dict(depth int) (any, error) {
	p.i++
	out := map[string]any{}
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return out, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, errLiteral // metadata keys are strings
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errLiteral
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[key] = v
		if !p.sep('}') {
			return nil, errLiteral
		}
	}
}

func (p *literalParser) number() (any, error) {
	j := p.i
	for j < len(p.s) && strings.IndexByte("+-.0123456789eE_xXoObBabcdefABCDEF", p.s[j]) >= 0 {
		j++
	}
	text := p.s[p.i:j]
	if n, err := strconv.ParseInt(strings.TrimPrefix(text, "+"), 0, 64); err == nil {
		p.i = j
		return n, nil
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && !strings.ContainsAny(text, "xXpP") {
		p.i = j
		return f, nil
	}
	return nil, errLiteral
}
