package notebook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/evalhost/evalhost/frames"
)

// Recorder writes execution output into a notebook's code cells as nbclient
// does with kernel messages: stdout/stderr become "stream" outputs (one per
// run of the same stream, merged), display → "display_data", result →
// "execute_result" with its execution_count, error → "error" with ename,
// evalue and traceback; done sets the cell's execution_count.
// update_display and clear_output are honoured. Outputs reach the notebook
// at each done frame and at Flush. A Recorder is not safe for concurrent use.
type Recorder struct {
	nb       *Notebook
	cell     int // -1 before Start
	outputs  []*value
	stream   strings.Builder // text of the last output, when it is a stream
	streamOn string          // that stream's name, "" when the last output is not a stream
	clearOn  bool            // clear_output(wait=True) pending
	displays map[string][]outputRef
}

type outputRef struct{ cell, index int }

// NewRecorder returns a Recorder writing into nb.
func NewRecorder(nb *Notebook) *Recorder {
	return &Recorder{nb: nb, cell: -1, displays: make(map[string][]outputRef)}
}

// Start begins recording into code cell i: its outputs are cleared and its
// execution_count set to null, as when a notebook runs it.
func (r *Recorder) Start(i int) error {
	r.Flush()
	if i < 0 || i >= len(r.nb.cells) {
		return r.nb.indexError("record outputs", i, len(r.nb.cells)-1)
	}
	if t := r.nb.Cell(i).Type; t != Code {
		return fmt.Errorf("record outputs: cell %d is a %s cell; only code cells have outputs", i, t)
	}
	r.cell, r.outputs, r.streamOn, r.clearOn = i, nil, "", false
	r.stream.Reset()
	r.setCell("execution_count", nullValue)
	r.Flush()
	return nil
}

// Add records one frame for the started cell. Frames that carry no output
// (started, input, warning, ready) are ignored. A bundle or metadata that is
// not valid JSON is an error and nothing is recorded for that frame.
func (r *Recorder) Add(f frames.Frame) error {
	if r.cell < 0 {
		return fmt.Errorf("record outputs: %s frame before Start", f.Type)
	}
	switch f.Type {
	case frames.TypeStdout, frames.TypeStderr:
		r.clearIfPending()
		r.addStream(f.Type.String(), f.Data)
	case frames.TypeDisplay, frames.TypeResult:
		return r.addRich(f)
	case frames.TypeUpdateDisplay:
		return r.updateDisplay(f)
	case frames.TypeClearOutput:
		if f.Wait {
			r.clearOn = true
		} else {
			r.clear()
		}
	case frames.TypeError:
		r.clearIfPending()
		r.appendOutput(errorOutput(f))
	case frames.TypeDone:
		count := nullValue
		if f.ExecutionCount > 0 {
			count = newRaw(kindNumber, strconv.Itoa(f.ExecutionCount))
		}
		r.setCell("execution_count", count)
		r.Flush()
	}
	return nil
}

// Flush writes the outputs recorded so far into the notebook.
func (r *Recorder) Flush() {
	if r.cell < 0 {
		return
	}
	r.sealStream()
	r.setCell("outputs", &value{kind: kindArray, arr: slices.Clone(r.outputs)})
}

func (r *Recorder) addStream(name, text string) {
	if r.streamOn != name {
		r.sealStream()
		r.stream.Reset()
		r.outputs = append(r.outputs, nil) // filled by sealStream
		r.streamOn = name
	}
	r.stream.WriteString(text)
}

// sealStream materialises the pending stream output; merging prints into
// one builder keeps many small writes linear.
func (r *Recorder) sealStream() {
	if r.streamOn == "" {
		return
	}
	o := newObject()
	o.set("name", newString(r.streamOn))
	o.set("output_type", newString("stream"))
	o.set("text", linesValue(r.stream.String()))
	r.outputs[len(r.outputs)-1] = o
}

func (r *Recorder) appendOutput(o *value) {
	r.sealStream()
	r.streamOn = ""
	r.stream.Reset()
	r.outputs = append(r.outputs, o)
}

func (r *Recorder) clearIfPending() {
	if r.clearOn {
		r.clear()
	}
}

func (r *Recorder) clear() {
	r.outputs, r.streamOn, r.clearOn = nil, "", false
	r.stream.Reset()
	for id, refs := range r.displays {
		r.displays[id] = slices.DeleteFunc(refs, func(o outputRef) bool { return o.cell == r.cell })
	}
}

func (r *Recorder) addRich(f frames.Frame) error {
	o, err := richOutput(f)
	if err != nil {
		return err
	}
	r.clearIfPending()
	r.appendOutput(o)
	if f.Type == frames.TypeDisplay && f.DisplayID != "" {
		r.displays[f.DisplayID] = append(r.displays[f.DisplayID], outputRef{r.cell, len(r.outputs) - 1})
	}
	return nil
}

// updateDisplay replaces data and metadata of every output shown with the
// frame's display id, in this cell or an earlier one.
func (r *Recorder) updateDisplay(f frames.Frame) error {
	data, md, err := bundleValues(f)
	if err != nil {
		return err
	}
	for _, ref := range r.displays[f.DisplayID] {
		if ref.cell == r.cell {
			r.outputs[ref.index] = updated(r.outputs[ref.index], data, md)
			continue
		}
		c := r.nb.cells[ref.cell].shallowCopy()
		outs := c.get("outputs").shallowCopy()
		outs.arr[ref.index] = updated(outs.arr[ref.index], data, md)
		c.set("outputs", outs)
		r.nb.cells[ref.cell] = c
	}
	return nil
}

func updated(o, data, md *value) *value {
	o = o.shallowCopy()
	o.set("data", data)
	o.set("metadata", md)
	return o
}

// setCell sets a field of the recorded cell, copying the cell first.
func (r *Recorder) setCell(name string, v *value) {
	c := r.nb.cells[r.cell].shallowCopy()
	c.set(name, v)
	r.nb.cells[r.cell] = c
}

func richOutput(f frames.Frame) (*value, error) {
	data, md, err := bundleValues(f)
	if err != nil {
		return nil, err
	}
	o := newObject()
	o.set("data", data)
	o.set("metadata", md)
	if f.Type == frames.TypeResult {
		o.set("execution_count", newRaw(kindNumber, strconv.Itoa(f.ExecutionCount)))
		o.set("output_type", newString("execute_result"))
	} else {
		o.set("output_type", newString("display_data"))
	}
	return o, nil
}

func errorOutput(f frames.Frame) *value {
	tb := &value{kind: kindArray, arr: make([]*value, len(f.Traceback))}
	for i, l := range f.Traceback {
		tb.arr[i] = newString(l)
	}
	o := newObject()
	o.set("ename", newString(f.Ename))
	o.set("evalue", newString(f.Evalue))
	o.set("output_type", newString("error"))
	o.set("traceback", tb)
	return o
}

// bundleValues builds nbformat's "data" and "metadata" from a frame: keys
// sorted, strings spelled as Python writes them, text MIME values split
// into lines (nbformat splits text/*, application/javascript and
// image/svg+xml).
func bundleValues(f frames.Frame) (data, md *value, err error) {
	data = newObject()
	for mime, raw := range f.Bundle {
		v, err := parseJSON(string(raw))
		if err != nil {
			return nil, nil, fmt.Errorf("record outputs: %s bundle %q is not valid JSON: %w", f.Type, mime, err)
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
	if len(f.Metadata) > 0 && string(f.Metadata) != "null" {
		v, err := parseJSON(string(f.Metadata))
		if err != nil {
			return nil, nil, fmt.Errorf("record outputs: %s metadata is not valid JSON: %w", f.Type, err)
		}
		if v.kind != kindObject {
			return nil, nil, fmt.Errorf("record outputs: %s metadata is a %s, want an object", f.Type, v.kind)
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
