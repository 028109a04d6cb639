package params

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// ErrBadParameter is matched by an [*Error].
var ErrBadParameter = errors.New("bad parameter")

// ErrNotParameters is matched by an [*Error] whose text is no parameters at
// all: no YAML mapping (-f, -y), no NAME:VALUE (-P), a NAME that is no
// identifier (-p 8080): perhaps not meant as parameters, as a flag of a
// script's given before the script.
var ErrNotParameters = errors.New("not parameters")

// Error is a parameter that cannot be passed: a bad name, YAML that cannot
// be read or is not a mapping. Source says where it came from ("-p x",
// "-f params.yaml").
type Error struct {
	Source string
	Msg    string
	// NotParameters: the text is no parameters at all (ErrNotParameters).
	NotParameters bool
}

func (e *Error) Error() string { return e.Source + ": " + e.Msg }

func (e *Error) Unwrap() []error {
	if e.NotParameters {
		return []error{ErrBadParameter, ErrNotParameters}
	}
	return []error{ErrBadParameter}
}

// Params are named values in the order they were first given.
type Params struct{ m Map }

// Len says how many parameters there are.
func (p *Params) Len() int { return len(p.m) }

// Names lists the parameters' names in order.
func (p *Params) Names() []string {
	names := make([]string, len(p.m))
	for i, kv := range p.m {
		names[i] = kv.Key.(string)
	}
	return names
}

// Set sets a parameter; source names the flag for errors.
func (p *Params) Set(name string, value any, source string) error {
	if err := checkName(name); err != nil {
		return &Error{Source: source, Msg: err.Error()}
	}
	p.m = p.m.set(name, value)
	return nil
}

// SetTyped is -p NAME VALUE: the value typed by Resolve.
func (p *Params) SetTyped(name, value string) error {
	return p.setFlag(name, Resolve(value), "-p "+name)
}

// SetRaw is -r NAME VALUE: the value a string as given.
func (p *Params) SetRaw(name, value string) error {
	return p.setFlag(name, value, "-r "+name)
}

// setFlag is Set for a NAME of the command line's, which is no parameters
// at all (ErrNotParameters) when it is no identifier: -p 8080. A keyword
// is a name, just one Python cannot assign.
func (p *Params) setFlag(name string, value any, source string) error {
	err := p.Set(name, value, source)
	if e, ok := err.(*Error); ok && !isIdentifier(name) {
		e.NotParameters = true
	}
	return err
}

// MergeYAML adds the parameters of a YAML mapping (-y TEXT, -f FILE);
// an empty document adds none. source names it for errors.
func (p *Params) MergeYAML(data []byte, source string) error {
	v, err := parseYAML(data)
	var long *intDigitsError
	if errors.As(err, &long) { // a value's mistake: the text is parameters
		return &Error{Source: source, Msg: long.Error()}
	}
	if err != nil {
		return &Error{Source: source, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "), NotParameters: true}
	}
	if v == nil {
		return nil
	}
	m, ok := v.(Map)
	if !ok {
		return &Error{Source: source, Msg: fmt.Sprintf("want a mapping of parameter names to values (name: value), got %s", kindOf(v)), NotParameters: true}
	}
	for _, kv := range m {
		name, ok := kv.Key.(string)
		if !ok {
			return &Error{Source: source, Msg: fmt.Sprintf("parameter name %s is not a string", pyStr(kv.Key))}
		}
		if err := p.Set(name, kv.Value, source); err != nil {
			return err
		}
	}
	return nil
}

// SetQuarto is quarto's -P NAME:VALUE (or NAME=VALUE, which quarto takes
// too: its parseMetadataFlagValue splits at the first = or :), the value
// read as YAML.
func (p *Params) SetQuarto(spec string) error {
	i := strings.IndexAny(spec, "=:")
	if i < 0 {
		return &Error{Source: "-P " + spec, Msg: "want NAME:VALUE (or NAME=VALUE)", NotParameters: true}
	}
	name, value := spec[:i], spec[i+1:]
	v, err := parseYAML([]byte(value))
	var long *intDigitsError
	if errors.As(err, &long) { // named by NAME: the value is thousands of digits
		return &Error{Source: "-P " + strings.TrimSpace(name), Msg: long.Error()}
	}
	if err != nil {
		return &Error{Source: "-P " + spec, Msg: "the value is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	return p.Set(strings.TrimSpace(name), v, "-P "+name)
}

func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	}
	return "a " + pyStr(v) + " scalar"
}

// Source is the injected cell's code, as papermill's Python translator
// writes it (without black).
func (p *Params) Source() string {
	var b strings.Builder
	b.WriteString("# Parameters\n")
	for _, kv := range p.m {
		b.WriteString(kv.Key.(string) + " = " + pyValue(kv.Value) + "\n")
	}
	return b.String()
}

var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

// checkName refuses what cannot be assigned to in Python: the injected
// cell would fail with a SyntaxError.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("the parameter name is empty")
	case !isIdentifier(name):
		return fmt.Errorf("parameter name %q is not a Python identifier (letters, digits and _, not starting with a digit)", name)
	case pyKeywords[name]:
		return fmt.Errorf("parameter name %q is a Python keyword, which the injected cell cannot assign (%s = ... is a SyntaxError): give the parameter another name", name, name)
	}
	return nil
}

// isIdentifier says whether name is letters, digits and _, not starting
// with a digit (a keyword included).
func isIdentifier(name string) bool {
	for i, r := range name {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return name != ""
}

// Metadata is the parameters as papermill records them in the notebook's
// metadata.papermill.parameters, as values notebook.SetMetadata writes:
// json.dumps's JSON of the Python values (ints of any size as
// json.Number, mapping keys as json.dumps makes them strings; NaN and
// infinities stay floats, which SetMetadata writes NaN, Infinity and
// -Infinity, as json.dumps does).
func (p *Params) Metadata() map[string]any {
	out := make(map[string]any, len(p.m))
	for _, kv := range p.m {
		out[kv.Key.(string)] = jsonValue(kv.Value)
	}
	return out
}

func jsonValue(v any) any {
	switch v := v.(type) {
	case *big.Int:
		return json.Number(v.String())
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	case Map:
		out := make(map[string]any, len(v))
		for _, kv := range v {
			out[jsonKey(kv.Key)] = jsonValue(kv.Value)
		}
		return out
	}
	return v // nil, bool, string
}

// jsonKey is the string json.dumps makes of a mapping key.
func jsonKey(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(k)
	}
	return pyStr(k)
}
