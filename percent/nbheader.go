package percent

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/evalhost/evalhost/internal/trustdir"
	"go.yaml.in/yaml/v3"
)

// This file ports jupytext's header_to_metadata_and_cell for a .py
// script: the shebang and coding lines, and the YAML header whose
// "jupyter:" section is the notebook's metadata, its other keys a raw
// cell. Values are read as PyYAML's safe_load reads them (YAML 1.1).

// nbHeader is what the top of a script makes of the notebook.
type nbHeader struct {
	md      *metadata
	jupyter bool          // a "jupyter:" section was read
	cell    *NotebookCell // the header's other keys, as a raw cell
	lines   int           // lines the header takes
}

// metadata is the notebook's metadata, its keys kept in order: the
// notebook_metadata_filter jupytext writes lists them in it.
type metadata struct {
	values map[string]any
	order  []string
}

func newMetadata() *metadata { return &metadata{values: map[string]any{}} }

func (m *metadata) set(key string, v any) {
	if _, ok := m.values[key]; !ok {
		m.order = append(m.order, key)
	}
	m.values[key] = v
}

func (m *metadata) pop(key string) (any, bool) {
	v, ok := m.values[key]
	if ok {
		delete(m.values, key)
		for i, k := range m.order {
			if k == key {
				m.order = append(m.order[:i:i], m.order[i+1:]...)
				break
			}
		}
	}
	return v, ok
}

// jupytext is metadata.jupytext, made when absent (setdefault).
func (m *metadata) jupytext() map[string]any {
	j, ok := m.values["jupytext"].(map[string]any)
	if !ok {
		j = map[string]any{}
		m.set("jupytext", j)
	}
	return j
}

// section is metadata[key] when it is a mapping.
func (m *metadata) section(key string) map[string]any {
	s, _ := m.values[key].(map[string]any)
	return s
}

var (
	// Compiled on first use: at init they would cost every evalhost start.
	headerFenceRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^---[` + pySpace + `]*$`) })
	jupyterLineRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^jupyter[` + pySpace + `]*:[` + pySpace + `]*$`)
	})
)

// ErrEncoding: a script whose coding line names another encoding than
// utf-8, which jupytext refuses.
var ErrEncoding = errors.New("a script jupytext reads only in utf-8")

// readNotebookHeader reads the header at the top of lines.
func readNotebookHeader(lines []string) (nbHeader, error) {
	var header, jupyter []string
	extra := map[string]any{} // metadata.jupytext's executable and encoding
	start, started, ended, inJupyter := 0, false, false, false
	i := 0
	for ; i < len(lines); i++ {
		line := lines[i]
		if i == 0 && strings.HasPrefix(line, "#!") {
			extra["executable"], start = line[2:], i+1
			continue
		}
		if i == 0 || i == 1 && !codingRe().MatchString(lines[0]) {
			if m := codingRe().FindStringSubmatch(line); m != nil {
				if m[1] != "utf-8" {
					return nbHeader{}, fmt.Errorf("%w: line %d declares coding %s (jupytext: \"Encodings other than utf-8 are not supported\")", ErrEncoding, i+1, m[1])
				}
				extra["encoding"], start = line, i+1
				continue
			}
		}
		if !strings.HasPrefix(line, "#") {
			break
		}
		line = uncommentPrefix(line, "#")
		if headerFenceRe().MatchString(line) {
			if !started {
				started = true
				continue
			}
			ended = true
			break
		}
		if !started && pyStrip(line) != "" {
			break
		}
		switch {
		case jupyterLineRe().MatchString(line):
			inJupyter = true
		case line != "" && !pyIsSpace([]rune(line)[0]):
			inJupyter = false
		}
		if inJupyter {
			jupyter = append(jupyter, line)
		} else {
			header = append(header, line)
		}
	}
	md := newMetadata()
	if len(extra) > 0 {
		md.set("jupytext", extra)
	}
	if !ended {
		return nbHeader{md: md, lines: start}, nil
	}
	if len(jupyter) > 0 {
		var err error
		if md, err = jupyterSection(jupyter, extra); err != nil {
			return nbHeader{}, err
		}
	}
	h := nbHeader{md: md, jupyter: len(jupyter) > 0}
	toNext := 0
	if i+1 < len(lines) {
		if pyBlank(uncommentPrefix(lines[i+1], "#")) {
			toNext = 1
			i++
		}
	}
	if len(header) > 0 {
		cellMD := map[string]any{}
		if toNext != pep8LinesBetweenCells([]string{"---"}, lines[i+1:]) {
			cellMD["lines_to_next_cell"] = int64(toNext)
		}
		h.cell = &NotebookCell{Type: "raw", Source: strings.Join(append(append([]string{"---"}, header...), "---"), "\n"),
			Metadata: cellMD, Line: 1}
	}
	h.lines = i + 1
	return h, nil
}

// jupyterSection reads the "jupyter:" lines as the notebook's metadata,
// refusing what jupytext refuses (readSection), with extra (the
// shebang's and coding line's) merged into its jupytext section.
func jupyterSection(section []string, extra map[string]any) (*metadata, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(section, "\n")), &doc); err != nil {
		return nil, fmt.Errorf("%w: the \"jupyter:\" section is not YAML (%w)", ErrBadHeader, err)
	}
	if _, err := readSection(&doc); err != nil {
		return nil, fmt.Errorf("%w: the \"jupyter:\" section: %w", ErrBadHeader, err)
	}
	node := lookup(&doc, "jupyter")
	md := newMetadata()
	r := yamlReader{budget: maxHeaderValues}
	pairs, err := r.mergedPairs(node, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: the \"jupyter:\" section: %w", ErrBadHeader, err)
	}
	for _, pair := range pairs {
		k, err := r.key(pair[0])
		if err != nil {
			return nil, fmt.Errorf("%w: the \"jupyter:\" section: %w", ErrBadHeader, err)
		}
		v, err := r.value(pair[1], 0)
		if err != nil {
			return nil, fmt.Errorf("%w: the \"jupyter:\" section: %s: %w", ErrBadHeader, k, err)
		}
		md.set(k, v)
	}
	if len(extra) > 0 {
		j := md.jupytext()
		for k, v := range extra {
			j[k] = v
		}
	}
	return md, nil
}

// maxHeaderValues bounds the keys and values a header's "jupyter:"
// section expands to: aliases can repeat a list or mapping exponentially
// (a "billion laughs": nine levels of nine took 7.8 GB), as params bounds
// -y and -f.
const maxHeaderValues = 100000

// yamlReader reads a section's values, budget of them at most.
type yamlReader struct{ budget int }

// value is n as PyYAML's safe_load reads it, in the types
// encoding/json writes: a mapping's keys made strings as json.dumps
// makes them. A date or time, which nbformat cannot write, is an error.
func (r *yamlReader) value(n *yaml.Node, depth int) (any, error) {
	n = unalias(n)
	if depth > 100 {
		return nil, errors.New("nested too deep")
	}
	if err := r.spend(1); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return r.value(n.Content[0], depth)
	case yaml.SequenceNode:
		list := []any{}
		for _, c := range n.Content {
			v, err := r.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		m := map[string]any{}
		pairs, err := r.mergedPairs(n, depth)
		if err != nil {
			return nil, err
		}
		for _, pair := range pairs {
			k, err := r.key(pair[0])
			if err != nil {
				return nil, err
			}
			if m[k], err = r.value(pair[1], depth+1); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return yamlScalar(n)
}

// key is a mapping key as json.dumps writes it: a string as it is,
// null, booleans and numbers as JSON spells them.
func (r *yamlReader) key(n *yaml.Node) (string, error) {
	v, err := r.value(n, 0)
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(v), nil
	case int64, float64, json.Number:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("a mapping key that is a %T, which JSON has not", v)
}

var (
	pyYAMLFloatRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	})
	pyYAMLIntRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	})
	pyYAMLBoolRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	})
	pyYAMLTimeRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	})
)

// yamlScalar resolves a scalar as PyYAML's SafeLoader does: a quoted or
// block one is a string; a plain one is null, a YAML 1.1 boolean ("yes",
// "off"), an int (0b, 0x, a leading 0 octal, 1_000, 1:30), a float (a
// dot required: "1e3" is a string) or a string; an explicit tag says.
func yamlScalar(n *yaml.Node) (any, error) {
	v := n.Value
	tag := ""
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.ShortTag()
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return v, nil
	case v == "" || v == "~" || v == "null" || v == "Null" || v == "NULL":
		return nil, nil
	case pyYAMLBoolRe().MatchString(v):
		return pyYAMLBool(v), nil
	case pyYAMLIntRe().MatchString(v):
		tag = "!!int"
	case pyYAMLFloatRe().MatchString(v):
		tag = "!!float"
	case pyYAMLTimeRe().MatchString(v):
		return nil, fmt.Errorf("%s is a date, which jupytext cannot write into a notebook (quote it)", trustdir.Shown(v))
	default:
		return v, nil
	}
	switch tag {
	case "!!int":
		return pyYAMLInt(v)
	case "!!float":
		return pyYAMLFloat(v)
	case "!!bool":
		return pyYAMLBool(v), nil
	case "!!null":
		return nil, nil
	case "!!str":
		return v, nil
	}
	return nil, fmt.Errorf("%s is tagged %s, which jupytext cannot write into a notebook", trustdir.Shown(v), trustdir.Shown(tag))
}

// pyYAMLBool is PyYAML's construct_yaml_bool.
func pyYAMLBool(v string) bool {
	switch strings.ToLower(v) {
	case "yes", "true", "on":
		return true
	}
	return false
}

// pyYAMLInt is PyYAML's construct_yaml_int.
func pyYAMLInt(v string) (any, error) {
	v = strings.ReplaceAll(v, "_", "")
	sign := 1
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	n := new(big.Int)
	switch {
	case v == "0":
	case strings.HasPrefix(v, "0b"):
		n.SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		n.SetString(v[2:], 16)
	case strings.HasPrefix(v, "0"):
		n.SetString(v[1:], 8)
	case strings.Contains(v, ":"):
		for _, part := range strings.Split(v, ":") {
			d, _ := strconv.ParseInt(part, 10, 64)
			n.Mul(n, big.NewInt(60))
			n.Add(n, big.NewInt(d))
		}
	default:
		n.SetString(v, 10)
	}
	if sign < 0 {
		n.Neg(n)
	}
	if n.IsInt64() {
		return n.Int64(), nil
	}
	return json.Number(n.String()), nil
}

// pyYAMLFloat is PyYAML's construct_yaml_float.
func pyYAMLFloat(v string) (any, error) {
	v = strings.ToLower(strings.ReplaceAll(v, "_", ""))
	sign := 1.0
	if v != "" && (v[0] == '-' || v[0] == '+') {
		if v[0] == '-' {
			sign = -1
		}
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), nil
	case v == ".nan":
		return math.NaN(), nil
	case strings.Contains(v, ":"):
		f := 0.0
		for _, part := range strings.Split(v, ":") {
			d, _ := strconv.ParseFloat(part, 64)
			f = f*60 + d
		}
		return sign * f, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, fmt.Errorf("%s is no float", v)
	}
	return sign * f, nil
}

// mergedPairs are a mapping's key-value pairs as PyYAML's flatten_mapping
// makes them: those a "<<" key merges in (of the first mapping of a list
// last, so that it wins) before the mapping's own, which win. Each merged
// pair is spent of the budget: a list of aliases merged repeats them.
func (r *yamlReader) mergedPairs(n *yaml.Node, depth int) ([][2]*yaml.Node, error) {
	var merged, own [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], unalias(n.Content[i+1])
		if k.ShortTag() != "!!merge" || depth > 100 {
			own = append(own, [2]*yaml.Node{k, v})
			continue
		}
		sources := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			sources = nil
			for j := len(v.Content) - 1; j >= 0; j-- {
				sources = append(sources, unalias(v.Content[j]))
			}
		}
		for _, s := range sources {
			if s.Kind != yaml.MappingNode {
				continue
			}
			pairs, err := r.mergedPairs(s, depth+1)
			if err != nil {
				return nil, err
			}
			if err := r.spend(len(pairs)); err != nil {
				return nil, err
			}
			merged = append(merged, pairs...)
		}
	}
	return append(merged, own...), nil
}

// spend takes n values of the budget, or says it is spent.
func (r *yamlReader) spend(n int) error {
	if r.budget -= n; r.budget < 0 {
		return fmt.Errorf("more than %d keys and values, its aliases expanded (PyYAML reads an alias as shared, json.dumps writes each copy): "+
			"a header is no place for data this large; keep it in a file the notebook reads", maxHeaderValues)
	}
	return nil
}
