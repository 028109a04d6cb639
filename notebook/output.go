package notebook

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Output is one nbformat output of a code cell, built as nbformat writes
// it. The zero Output is invalid. Outputs are immutable: an update makes a
// new one, so a notebook cloned earlier never sees it.
type Output struct{ v *value }

// Type is the output's output_type: stream, display_data,
// execute_result or error.
func (o Output) Type() string {
	if o.v == nil {
		return ""
	}
	s, _ := o.v.get("output_type").str()
	return s
}

// Text is what a reader sees of the output as text: a stream's text, the
// text/plain of display_data and execute_result, "ename: evalue" of an
// error.
func (o Output) Text() string {
	switch o.Type() {
	case "stream":
		s, _ := joinStrings(o.v.get("text"))
		return s
	case "error":
		name, _ := o.v.get("ename").str()
		val, _ := o.v.get("evalue").str()
		return name + ": " + val
	}
	if d := o.v.get("data"); d != nil {
		s, _ := joinStrings(d.get("text/plain"))
		return s
	}
	return ""
}

// Traceback is an error output's traceback, as the kernel wrote it: one
// entry per element (an entry may hold several lines and ANSI colours). It
// is nil for other outputs and for entries that are not strings.
func (o Output) Traceback() []string {
	if o.Type() != "error" {
		return nil
	}
	tb := o.v.get("traceback")
	if tb == nil || tb.kind != kindArray {
		return nil
	}
	lines := make([]string, 0, len(tb.arr))
	for _, e := range tb.arr {
		if s, ok := e.str(); ok {
			lines = append(lines, s)
		}
	}
	return lines
}

// Outputs returns the outputs of cell i, which must be in range; cells
// other than code cells have none.
func (nb *Notebook) Outputs(i int) []Output {
	arr := nb.cells[i].get("outputs")
	if arr == nil || arr.kind != kindArray {
		return nil
	}
	outs := make([]Output, 0, len(arr.arr))
	for _, v := range arr.arr {
		if v.kind == kindObject {
			outs = append(outs, Output{v})
		}
	}
	return outs
}

// StreamOutput is a "stream" output of stdout or stderr (name) text.
func StreamOutput(name, text string) Output {
	o := newObject()
	o.set("name", newString(name))
	o.set("output_type", newString("stream"))
	o.set("text", linesValue(text))
	return Output{o}
}

// DisplayData is a "display_data" output of a MIME bundle (each value the
// JSON of that MIME type's data) and its metadata (a JSON object, or empty).
// A value that is not valid JSON, or metadata that is not an object, is an
// error and nothing is built.
func DisplayData(data map[string]json.RawMessage, metadata json.RawMessage) (Output, error) {
	return rich("display_data", data, metadata, 0)
}

// ExecuteResult is an "execute_result" output: a bundle as in DisplayData
// and the execution count it answers.
func ExecuteResult(data map[string]json.RawMessage, metadata json.RawMessage, executionCount int) (Output, error) {
	return rich("execute_result", data, metadata, executionCount)
}

func rich(kind string, data map[string]json.RawMessage, metadata json.RawMessage, count int) (Output, error) {
	d, md, err := bundleValues(data, metadata)
	if err != nil {
		return Output{}, err
	}
	o := newObject()
	o.set("data", d)
	o.set("metadata", md)
	if kind == "execute_result" {
		o.set("execution_count", newRaw(kindNumber, strconv.Itoa(count)))
	}
	o.set("output_type", newString(kind))
	return Output{o}, nil
}

// ErrorOutput is an "error" output.
func ErrorOutput(ename, evalue string, traceback []string) Output {
	tb := &value{kind: kindArray, arr: make([]*value, len(traceback))}
	for i, l := range traceback {
		tb.arr[i] = newString(l)
	}
	o := newObject()
	o.set("ename", newString(ename))
	o.set("evalue", newString(evalue))
	o.set("output_type", newString("error"))
	o.set("traceback", tb)
	return Output{o}
}

// WithBundle returns the output with its data and metadata replaced, as a
// display update replaces them in every output shown under its display
// id; the rest (output_type, execution_count) stays. Errors are
// DisplayData's.
func (o Output) WithBundle(data map[string]json.RawMessage, metadata json.RawMessage) (Output, error) {
	d, md, err := bundleValues(data, metadata)
	if err != nil {
		return Output{}, err
	}
	c := o.v.shallowCopy()
	c.set("data", d)
	c.set("metadata", md)
	return Output{c}, nil
}

// SetOutputs replaces the outputs of code cell i.
func (nb *Notebook) SetOutputs(i int, outputs []Output) error {
	if err := nb.codeCell("set outputs of", i); err != nil {
		return err
	}
	arr := make([]*value, len(outputs))
	for j, o := range outputs {
		if o.v == nil {
			return fmt.Errorf("set outputs of cell %d: output %d is the zero Output", i, j)
		}
		arr[j] = o.v
	}
	nb.setCellField(i, "outputs", &value{kind: kindArray, arr: arr})
	return nil
}

// SetExecutionCount sets code cell i's execution_count; n <= 0 writes null,
// as for a cell that has not finished running.
func (nb *Notebook) SetExecutionCount(i, n int) error {
	if err := nb.codeCell("set the execution count of", i); err != nil {
		return err
	}
	count := nullValue
	if n > 0 {
		count = newRaw(kindNumber, strconv.Itoa(n))
	}
	nb.setCellField(i, "execution_count", count)
	return nil
}

func (nb *Notebook) codeCell(what string, i int) error {
	if i < 0 || i >= len(nb.cells) {
		return nb.indexError(what, i, len(nb.cells)-1)
	}
	if t := nb.Cell(i).Type; t != Code {
		return fmt.Errorf("%s cell %d: it is a %s cell; only code cells have outputs", what, i, t)
	}
	return nil
}

// setCellField sets a field of cell i, copying the cell first.
func (nb *Notebook) setCellField(i int, name string, v *value) {
	c := nb.cells[i].shallowCopy()
	c.set(name, v)
	nb.cells[i] = c
}

// bundleValues builds nbformat's "data" and "metadata": keys sorted,
// strings spelled as Python writes them, text MIME values split into lines
// (nbformat splits text/*, application/javascript and image/svg+xml).
func bundleValues(bundle map[string]json.RawMessage, metadata json.RawMessage) (data, md *value, err error) {
	data = newObject()
	for _, mime := range slices.Sorted(maps.Keys(bundle)) {
		raw := bundle[mime]
		v, err := parseJSON(string(raw))
		if err != nil {
			return nil, nil, fmt.Errorf("bundle %q is not valid JSON: %w", mime, err)
		}
		v = normalized(v)
		if v.kind != kindString && !jsonMime(mime) {
			// nbformat allows only text under a non-JSON type; a structured
			// value (display(bundle, raw=True)) is kept as its JSON text.
			v = newString(string(raw))
		}
		if s, ok := v.str(); ok && splitsMime(mime) {
			v = linesValue(s)
		}
		data.obj = append(data.obj, member{rawKey: string(appendPyString(nil, mime)), name: mime, val: v})
	}
	data.sortKeys()
	md = newObject()
	if len(metadata) > 0 && string(metadata) != "null" {
		v, err := parseJSON(string(metadata))
		if err != nil {
			return nil, nil, fmt.Errorf("metadata is not valid JSON: %w", err)
		}
		if v.kind != kindObject {
			return nil, nil, fmt.Errorf("metadata is a %s, want an object", v.kind)
		}
		md = normalized(v)
	}
	return data, md, nil
}

func jsonMime(mime string) bool {
	return mime == "application/json" || strings.HasSuffix(mime, "+json")
}

func splitsMime(mime string) bool {
	return strings.HasPrefix(mime, "text/") || mime == "application/javascript" || mime == "image/svg+xml"
}

// normalized re-spells a freshly parsed tree as nbformat would write it:
// sorted keys, strings in Python's ensure_ascii=False form.
func normalized(v *value) *value {
	switch v.kind {
	case kindString:
		s, _ := v.str()
		return newString(s)
	case kindArray:
		for i, e := range v.arr {
			v.arr[i] = normalized(e)
		}
	case kindObject:
		for i := range v.obj {
			v.obj[i].rawKey = string(appendPyString(nil, v.obj[i].name))
			v.obj[i].val = normalized(v.obj[i].val)
		}
		v.sortKeys()
	}
	return v
}
