package params

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Map is a YAML mapping in its order; keys are scalars.
type Map []KV

// KV is one entry of a Map.
type KV struct {
	Key   any
	Value any
}

// set replaces key's value in place, or appends it, as a Python dict does.
func (m Map) set(key, value any) Map {
	for i := range m {
		if sameKey(m[i].Key, key) {
			m[i].Value = value
			return m
		}
	}
	return append(m, KV{key, value})
}

// sameKey is Python's key equality: True is 1, False 0, and a float
// equal to an int is that int (1.0 is 1), so a dict holds them as one.
func sameKey(a, b any) bool {
	x, xNum := keyNumber(a)
	y, yNum := keyNumber(b)
	if xNum || yNum {
		return xNum && yNum && x.Cmp(y) == 0
	}
	return a == b
}

// keyNumber is a number key's exact value (bool as 0 or 1); not a NaN or
// an infinity, which equal no other key.
func keyNumber(k any) (*big.Float, bool) {
	switch v := k.(type) {
	case bool:
		if v {
			return big.NewFloat(1), true
		}
		return big.NewFloat(0), true
	case *big.Int:
		return new(big.Float).SetInt(v), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}
		return big.NewFloat(v), true
	}
	return nil, false
}

// PyYAML's YAML 1.1 implicit resolvers (resolver.py), without timestamps
// (papermill's NoDatesSafeLoader).
var (
	// Compiled on first use: at init they would cost every evalhost start.
	yamlBoolRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	})
	yamlFloatRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	})
	yamlIntRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	})
	yamlNullRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:~|null|Null|NULL|)$`) })
)

// parseYAML reads a YAML document into values as PyYAML's safe loader
// does; an empty document is nil.
func parseYAML(data []byte) (any, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// PyYAML's safe_load, which papermill reads -y and -f with, refuses a
	// stream of several documents; yaml.Unmarshal kept the first and
	// dropped the rest's parameters without a word.
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, fmt.Errorf("expected a single document, but found another one at line %d: give all the parameters in one mapping", next.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	r := yamlReader{budget: maxYAMLValues}
	return r.value(doc.Content[0], 0)
}

// maxYAMLValues bounds the values a document expands to: aliases can
// repeat a mapping exponentially (a "billion laughs").
const maxYAMLValues = 100000

type yamlReader struct{ budget int }

func (r *yamlReader) value(n *yaml.Node, depth int) (any, error) {
	if depth > 100 {
		return nil, fmt.Errorf("line %d: nested too deeply", n.Line)
	}
	if r.budget--; r.budget < 0 {
		return nil, fmt.Errorf("more than %d values (aliases expanded); pass fewer parameters", maxYAMLValues)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return r.value(n.Alias, depth+1)
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := r.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		return r.mapping(n, depth)
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func (r *yamlReader) mapping(n *yaml.Node, depth int) (Map, error) {
	// As PyYAML's flatten_mapping: the entries of merge keys ("<<") come
	// first, then the mapping's own, a later one replacing an earlier one
	// in its place.
	var merged, own []KV
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.Value == "<<" && kn.Style&yaml.TaggedStyle == 0 {
			entries, err := r.mergeEntries(vn, depth)
			if err != nil {
				return nil, err
			}
			merged = append(merged, entries...)
			continue
		}
		k, err := r.value(kn, depth+1)
		if err != nil {
			return nil, err
		}
		switch k.(type) {
		case []any, Map:
			return nil, fmt.Errorf("line %d: a mapping key must be a scalar", kn.Line)
		}
		v, err := r.value(vn, depth+1)
		if err != nil {
			return nil, err
		}
		own = append(own, KV{k, v})
	}
	m := Map{}
	for _, kv := range append(merged, own...) {
		m = m.set(kv.Key, kv.Value)
	}
	return m, nil
}

// mergeEntries are a merge key's entries: its mapping's, or for a list of
// mappings the last one's first (so that earlier ones win).
func (r *yamlReader) mergeEntries(n *yaml.Node, depth int) ([]KV, error) {
	v, err := r.value(n, depth+1)
	if err != nil {
		return nil, err
	}
	maps := []any{v}
	if list, ok := v.([]any); ok {
		maps = list
	}
	var entries []KV
	for i := len(maps) - 1; i >= 0; i-- {
		em, ok := maps[i].(Map)
		if !ok {
			return nil, fmt.Errorf("line %d: a merge key (<<) takes a mapping or a list of mappings", n.Line)
		}
		entries = append(entries, em...)
	}
	return entries, nil
}

func yamlScalar(n *yaml.Node) (any, error) {
	if n.Style&yaml.TaggedStyle != 0 {
		return taggedScalar(n)
	}
	if n.Style != 0 {
		return n.Value, nil // quoted, literal or folded: a string
	}
	s := n.Value
	switch {
	case yamlBoolRe().MatchString(s):
		l := strings.ToLower(s)
		return l == "yes" || l == "true" || l == "on", nil
	case yamlFloatRe().MatchString(s):
		return yamlFloat(s), nil
	case yamlIntRe().MatchString(s):
		return yamlIntNode(n, s)
	case yamlNullRe().MatchString(s):
		return nil, nil
	}
	return s, nil
}

// taggedScalar is a scalar with an explicit tag (!!str, !!int, ...).
func taggedScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		return yamlBoolRe().MatchString(n.Value) && strings.Contains("yes true on", strings.ToLower(n.Value)), nil
	case "!!int":
		if yamlIntRe().MatchString(n.Value) {
			return yamlIntNode(n, n.Value)
		}
	case "!!float":
		if yamlFloatRe().MatchString(n.Value) || yamlIntRe().MatchString(n.Value) {
			return yamlFloat(n.Value), nil
		}
	}
	return nil, fmt.Errorf("line %d: %s %q is not a value papermill's YAML loader reads", n.Line, n.ShortTag(), n.Value)
}

// yamlIntNode is yamlInt of n's text s, refused where PyYAML's int() is (a
// decimal of more digits than Python reads, which papermill fails on and
// which, written into metadata.papermill, Python's json could not read),
// and where its value has that many digits in decimal, written in another
// base (read without the limit): the parameters cell and the metadata
// write it in decimal, which python3 refuses (a SyntaxError in the cell),
// as papermill's translation of it fails.
func yamlIntNode(n *yaml.Node, s string) (any, error) {
	decimal := !strings.Contains(s, ":") && !strings.HasPrefix(strings.TrimLeft(s, "+-"), "0")
	if d := decimalDigits(s); decimal && d > maxIntDigits {
		return nil, &intDigitsError{line: n.Line, digits: d}
	}
	v := yamlInt(s)
	// Fewer bits than this is at most maxIntDigits digits: 2**14284 < 10**4300.
	if bits := v.BitLen(); bits > 14284 {
		e := &intDigitsError{line: n.Line, base: yamlIntBase(s)}
		if bits > 1<<20 {
			// Counted by its bits: writing out millions of digits takes seconds.
			e.digits, e.atLeast = int(float64(bits-1)*math.Log10(2))+1, true
			return nil, e
		}
		if e.digits = len(new(big.Int).Abs(v).String()); e.digits > maxIntDigits {
			return nil, e
		}
	}
	return v, nil
}

// yamlIntBase names the base of a YAML int that is not decimal.
func yamlIntBase(s string) string {
	s = strings.TrimLeft(s, "+-")
	switch {
	case strings.Contains(s, ":"):
		return "base 60"
	case strings.HasPrefix(s, "0x"):
		return "hexadecimal"
	case strings.HasPrefix(s, "0b"):
		return "binary"
	}
	return "octal"
}

// intDigitsError is a YAML int of more decimal digits than Python's int()
// reads, or converts to a decimal string (base: how it was written, when
// not in decimal): valid YAML, and parameters, but a value papermill
// fails on, which the user can pass as a string instead.
type intDigitsError struct {
	line, digits int
	atLeast      bool // digits is a lower bound
	base         string
}

func (e *intDigitsError) Error() string {
	const fix = "to pass it as a string, quote it in the YAML or give it with -r NAME VALUE"
	if e.base != "" {
		of := ""
		if e.atLeast {
			of = "at least "
		}
		return fmt.Sprintf("line %d: an integer of %s%d digits in decimal (written in %s), past Python's limit for converting an int to a decimal string (%d digits, sys.get_int_max_str_digits()), "+
			"which the parameters cell papermill writes would need: %s", e.line, of, e.digits, e.base, maxIntDigits, fix)
	}
	return fmt.Sprintf("line %d: an integer of %d digits, past Python's limit for converting a string to an int (%d digits, sys.get_int_max_str_digits()), "+
		"which papermill's YAML loader fails on: %s", e.line, e.digits, maxIntDigits, fix)
}

// yamlInt is PyYAML's construct_yaml_int.
func yamlInt(s string) *big.Int {
	s = strings.ReplaceAll(s, "_", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	n := new(big.Int)
	switch {
	case s == "0":
	case strings.HasPrefix(s, "0b"):
		n.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		n.SetString(s[2:], 16)
	case strings.HasPrefix(s, "0"):
		n.SetString(s, 8)
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, _ := strconv.Atoi(part)
			n.Mul(n, big.NewInt(60)).Add(n, big.NewInt(int64(d)))
		}
	default:
		n.SetString(s, 10)
	}
	if neg {
		n.Neg(n)
	}
	return n
}

// yamlFloat is PyYAML's construct_yaml_float.
func yamlFloat(s string) float64 {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if strings.HasPrefix(s, "-") {
		sign = -1
	}
	s = strings.TrimLeft(s, "+-")
	switch {
	case s == ".inf":
		return sign * math.Inf(1)
	case s == ".nan":
		return math.NaN()
	case strings.Contains(s, ":"):
		var f float64
		for _, part := range strings.Split(s, ":") {
			d, _ := strconv.ParseFloat(part, 64)
			f = f*60 + d
		}
		return sign * f
	}
	f, _ := strconv.ParseFloat(s, 64)
	return sign * f
}
