package percent

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file reads the "jupyter:" section's values as jupytext 1.19 uses
// them: a value jupytext reads by Python truthiness (comment_magics) is
// read so, whatever its type; one of a type jupytext cannot use (it fails
// reading the script, or nbformat's schema refuses the notebook) is an
// error naming it, and no other setting of the header is lost to it.

// kind is what jupytext expects of a value.
type kind int

const (
	mapping kind = iota
	text         // a string
	textOrNull
	textOrBool // a metadata filter: "all", "-all", true
	textOrList // formats: "ipynb,py:percent" or a list of them
	cellFilter // a cell metadata filter: textOrBool, or {additional: [...], excluded: all}
	list
	textOrMapping
	positiveInt
)

func (k kind) String() string {
	return [...]string{"a mapping", "a string", "a string", "a string or true/false", "a string or a list",
		"a string, true/false or a mapping", "a list", "a string or a mapping", "an integer from 1"}[k]
}

// rule is what jupytext expects at a path of the section; required is
// nbformat's schema for a mapping present.
type rule struct {
	path     string
	want     kind
	required bool
}

// rules are checked in order: a mapping before the keys inside it.
var rules = []rule{
	{"jupyter", mapping, true},
	{"jupyter.jupytext", mapping, false},
	{"jupyter.jupytext.text_representation", mapping, false},
	{"jupyter.jupytext.text_representation.extension", text, false},
	{"jupyter.jupytext.text_representation.format_name", text, false},
	{"jupyter.jupytext.text_representation.jupytext_version", text, false},
	{"jupyter.jupytext.main_language", textOrNull, false},
	{"jupyter.jupytext.notebook_metadata_filter", textOrBool, false},
	{"jupyter.jupytext.cell_metadata_filter", cellFilter, false},
	{"jupyter.jupytext.formats", textOrList, false},
	{"jupyter.kernelspec", mapping, false},
	{"jupyter.kernelspec.name", text, true},
	{"jupyter.kernelspec.display_name", text, true},
	{"jupyter.kernelspec.language", text, false},
	{"jupyter.language_info", mapping, false},
	{"jupyter.language_info.name", text, true},
	{"jupyter.language_info.codemirror_mode", textOrMapping, false},
	{"jupyter.language_info.file_extension", text, false},
	{"jupyter.language_info.mimetype", text, false},
	{"jupyter.language_info.pygments_lexer", text, false},
	{"jupyter.orig_nbformat", positiveInt, false},
	{"jupyter.title", text, false},
	{"jupyter.authors", list, false},
}

// headerValues are the settings of a "jupyter:" section Split uses.
type headerValues struct {
	commentMagics *bool
	formatName    string
	formatUnknown bool // format_name is there, and no string
}

// readSection reads the parsed "jupyter:" section's settings and checks
// it against rules: the first value jupytext cannot use is the error, and
// the settings are read all the same (a bad kernelspec hides no
// comment_magics), format_name only when it is a string.
func readSection(doc *yaml.Node) (headerValues, error) {
	var v headerValues
	if n := lookup(doc, "jupyter.jupytext.comment_magics"); n != nil {
		b := truthy(n)
		v.commentMagics = &b
	}
	if n := lookup(doc, "jupyter.jupytext.text_representation.format_name"); n != nil {
		if text.fits(n) {
			v.formatName = n.Value
		} else {
			v.formatUnknown = true
		}
	}
	for _, r := range rules {
		parent, key := "", r.path
		if i := strings.LastIndexByte(r.path, '.'); i >= 0 {
			parent, key = r.path[:i], r.path[i+1:]
		}
		p := lookup(doc, parent)
		if p == nil {
			continue // a mapping further up is absent
		}
		n := lookupKey(p, key)
		if n == nil {
			if r.required {
				return v, fmt.Errorf("%s has no %s (%s), which the notebook's schema requires", parent, key, r.want)
			}
			continue
		}
		if !r.want.fits(n) {
			return v, fmt.Errorf("%s is %s, where jupytext reads %s", r.path, shown(n), r.want)
		}
	}
	return v, nil
}

// lookup is the node at a dotted path of mappings from doc ("" is doc's
// top mapping), nil where one is absent or not a mapping.
func lookup(doc *yaml.Node, path string) *yaml.Node {
	n := doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if path == "" {
		return n
	}
	for _, key := range strings.Split(path, ".") {
		if n = lookupKey(n, key); n == nil {
			return nil
		}
	}
	return n
}

// lookupKey is key's value in mapping m (its last, as PyYAML keeps), an
// alias followed; nil when m is not a mapping or has no key.
func lookupKey(m *yaml.Node, key string) *yaml.Node {
	m = unalias(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var found *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			found = unalias(m.Content[i+1])
		}
	}
	return found
}

func unalias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func (k kind) fits(n *yaml.Node) bool {
	tag := pyTag(n)
	switch k {
	case mapping:
		return n.Kind == yaml.MappingNode
	case text:
		return tag == "!!str"
	case textOrNull:
		return tag == "!!str" || tag == "!!null"
	case textOrBool:
		return tag == "!!str" || tag == "!!bool"
	case cellFilter:
		return tag == "!!str" || tag == "!!bool" || n.Kind == yaml.MappingNode
	case list:
		return n.Kind == yaml.SequenceNode
	case textOrMapping:
		return tag == "!!str" || n.Kind == yaml.MappingNode
	case positiveInt:
		v, err := pyYAMLInt(n.Value)
		i, ok := v.(int64)
		return tag == "!!int" && err == nil && (!ok || i >= 1) && !strings.HasPrefix(n.Value, "-")
	}
	return tag == "!!str" || n.Kind == yaml.SequenceNode
}

// pyYAMLBools are the plain scalars PyYAML (YAML 1.1), which jupytext
// reads the header with, takes for booleans beyond YAML 1.2's.
var pyYAMLBools = map[string]bool{"yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false}

// pyTag is n's type as PyYAML resolves it: a scalar's tag, its booleans
// included; "" for a mapping or a list.
func pyTag(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	if _, ok := pyYAMLBools[n.Value]; ok && n.Style == 0 && n.ShortTag() == "!!str" {
		return "!!bool"
	}
	return n.ShortTag()
}

// truthy is Python's bool() of n's value as PyYAML reads it.
func truthy(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		return len(n.Content) > 0
	}
	switch pyTag(n) {
	case "!!null":
		return false
	case "!!bool":
		if b, ok := pyYAMLBools[n.Value]; ok {
			return b
		}
		return strings.EqualFold(n.Value, "true")
	case "!!int":
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		return err != nil || i != 0
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		return err != nil || f != 0 || math.IsNaN(f)
	}
	return n.Value != ""
}

// shown is n as an error shows it: a string's text quoted, another
// scalar's with its type (3 is no "3"), or what it is.
func shown(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	switch pyTag(n) {
	case "!!null":
		return "empty (null)"
	case "!!int":
		return n.Value + " (an int)"
	case "!!float":
		return n.Value + " (a float)"
	case "!!bool":
		return n.Value + " (a boolean)"
	}
	return strconv.Quote(n.Value)
}
