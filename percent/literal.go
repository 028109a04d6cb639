package percent

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
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
	case p.strStart():
		return p.str()
	case c == '[':
		return p.list(']', depth)
	case c == '(':
		return p.list(')', depth)
	case c == '{':
		return p.dict(depth)
	case (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')) && !strings.HasPrefix(p.s[p.i:], "-Infinity"):
		return p.number()
	}
	// json.loads reads NaN, Infinity and -Infinity too.
	for word, v := range map[string]any{"true": true, "True": true, "false": false, "False": false, "null": nil, "None": nil,
		"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)} {
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

// str reads a string literal, and those right after it, which Python
// joins ("a" "b" is "ab"); an r prefix leaves backslashes as they are, a
// u prefix changes nothing.
func (p *literalParser) str() (any, error) {
	var b strings.Builder
	for {
		raw := false
		for p.i < len(p.s) && strings.IndexByte("uUrR", p.s[p.i]) >= 0 {
			raw = raw || p.s[p.i] == 'r' || p.s[p.i] == 'R'
			p.i++
		}
		if err := p.oneStr(&b, raw); err != nil {
			return nil, err
		}
		p.space()
		if !p.strStart() {
			return b.String(), nil
		}
	}
}

// strStart says whether a string literal starts at p.i: a quote, or a
// u, r, ur... prefix and a quote.
func (p *literalParser) strStart() bool {
	j := p.i
	for j < len(p.s) && j-p.i < 2 && strings.IndexByte("uUrR", p.s[j]) >= 0 {
		j++
	}
	return j < len(p.s) && (p.s[j] == '"' || p.s[j] == '\'')
}

func (p *literalParser) oneStr(b *strings.Builder, raw bool) error {
	if p.i >= len(p.s) {
		return errLiteral
	}
	quote := p.s[p.i]
	for j := p.i + 1; j < len(p.s); {
		c := p.s[j]
		switch {
		case c == quote:
			p.i = j + 1
			return nil
		case c == '\n':
			return errLiteral
		case c == '\\' && raw:
			b.WriteByte(c)
			if j+1 < len(p.s) {
				b.WriteByte(p.s[j+1]) // an escaped quote stays escaped, and ends no string
			}
			j += 2
		case c == '\\':
			v, _, tail, err := strconv.UnquoteChar(p.s[j:], quote)
			if err != nil {
				return errLiteral
			}
			b.WriteRune(v) // "\xe9" is the character, in Python
			j = len(p.s) - len(tail)
		default:
			b.WriteByte(c)
			j++
		}
	}
	return errLiteral
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

func isDecimal(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == "" && (s == "0" || s[0] != '0')
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
	if d := strings.TrimLeft(text, "+-"); len(text)-len(d) <= 1 && isDecimal(d) {
		// an int past int64, as Python keeps it
		n, ok := new(big.Int).SetString(strings.TrimPrefix(text, "+"), 10)
		if ok {
			p.i = j
			return json.Number(n.String()), nil
		}
	}
	// 1e400 is inf to Python, 1e-400 is 0.0
	if f, err := strconv.ParseFloat(text, 64); (err == nil || errors.Is(err, strconv.ErrRange)) && !strings.ContainsAny(text, "xXpP_") {
		p.i = j
		return f, nil
	}
	return nil, errLiteral
}
