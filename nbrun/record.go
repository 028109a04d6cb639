package nbrun

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/notebook"
)

// Recorder writes execution output into a notebook's code cells as nbclient
// does with kernel messages: stdout/stderr become "stream" outputs (one per
// run of the same stream, merged; a warning joins stderr), display → "display_data", result →
// "execute_result" with its execution_count, error → "error"; done sets the
// cell's execution_count. A display id applies to every output shown under
// it, execute_result included, in any recorded cell: update_display
// replaces their data and metadata, and so does a new display or result
// with an id already shown (which is then added too). clear_output (now,
// or with wait at the next output) empties the cell. Outputs reach the
// notebook at each done frame and at Flush. A Recorder is not safe for
// concurrent use.
type Recorder struct {
	nb       *notebook.Notebook
	cell     int                       // -1 before Start
	outputs  map[int][]notebook.Output // every recorded cell's outputs, for display updates
	stream   *notebook.StreamText      // the last output, when it is a stream; nil else
	sealed   bool                      // the notebook's outputs hold the stream's text so far
	changed  bool                      // the cell's outputs changed since they were written
	clearOn  bool                      // clear_output(wait=True) pending
	displays map[string][]outputRef
}

type outputRef struct{ cell, index int }

// NewRecorder returns a Recorder writing into nb.
func NewRecorder(nb *notebook.Notebook) *Recorder {
	return &Recorder{nb: nb, cell: -1, outputs: map[int][]notebook.Output{}, displays: map[string][]outputRef{}}
}

// Start begins recording into code cell i: its outputs are cleared and its
// execution_count set to null, as when a notebook runs it. A cell that is
// not a code cell, or out of range, is an error.
func (r *Recorder) Start(i int) error {
	r.Flush()
	if err := r.nb.SetExecutionCount(i, 0); err != nil {
		return fmt.Errorf("record outputs: %w", err)
	}
	r.cell, r.stream, r.clearOn = i, nil, false
	r.outputs[i], r.changed = nil, true
	r.forgetDisplays(i)
	r.Flush()
	return nil
}

// Add records one frame for the started cell. A warning (a display dropped
// for its size, output that may be incomplete) is recorded as stderr text,
// "[evalhost warning: MESSAGE]", since nbformat has no place for it and a
// notebook must not lose an output without a word. Frames that carry no
// output (started, input, ready) are ignored. A bundle or metadata that is
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
	case frames.TypeWarning:
		r.clearIfPending()
		r.addStream(frames.TypeStderr.String(), "[evalhost warning: "+strings.TrimRight(f.Message, "\n")+"]\n")
	case frames.TypeClearOutput:
		if f.Wait {
			r.clearOn = true
		} else {
			r.clear()
		}
	case frames.TypeError:
		r.clearIfPending()
		r.appendOutput(notebook.ErrorOutput(f.Ename, f.Evalue, f.Traceback))
	case frames.TypeDone:
		_ = r.nb.SetExecutionCount(r.cell, f.ExecutionCount) // Start checked the cell
		r.Flush()
	}
	return nil
}

// Flush writes the outputs recorded so far into the notebook, when they
// changed since it last did: a cell written again is encoded again at
// the next save, which for a cell that printed 300 MB is no small cost.
func (r *Recorder) Flush() {
	if r.cell < 0 {
		return
	}
	r.sealStream()
	if r.changed {
		_ = r.nb.SetOutputs(r.cell, r.outputs[r.cell]) // Start checked the cell
		r.changed = false
	}
}

func (r *Recorder) addStream(name, text string) {
	if r.stream == nil || r.stream.Name() != name {
		r.sealStream()
		r.stream = notebook.NewStreamText(name)
		r.outputs[r.cell] = append(r.outputs[r.cell], notebook.Output{}) // filled by sealStream
	}
	r.stream.Write(text)
	r.sealed, r.changed = false, true
}

// sealStream materialises the pending stream output; merging prints into
// one StreamText keeps many small writes linear and the text held once.
func (r *Recorder) sealStream() {
	if r.stream == nil || r.sealed {
		return
	}
	outs := r.outputs[r.cell]
	outs[len(outs)-1] = r.stream.Output()
	r.sealed = true
}

func (r *Recorder) appendOutput(o notebook.Output) {
	r.sealStream()
	r.stream = nil
	r.outputs[r.cell] = append(r.outputs[r.cell], o)
	r.changed = true
}

func (r *Recorder) clearIfPending() {
	if r.clearOn {
		r.clear()
	}
}

func (r *Recorder) clear() {
	r.outputs[r.cell], r.stream, r.clearOn = nil, nil, false
	r.changed = true
	r.forgetDisplays(r.cell)
}

// forgetDisplays drops the display references into a cell whose outputs
// are gone, as nbclient's clear_display_id_mapping does.
func (r *Recorder) forgetDisplays(cell int) {
	for id, refs := range r.displays {
		r.displays[id] = slices.DeleteFunc(refs, func(o outputRef) bool { return o.cell == cell })
	}
}

// notebookBundle is the bundle a notebook keeps: without the empty
// text/plain the protocol adds to a bundle that had none (a raw
// display, a kernel's output without it), which Jupyter does not write.
func notebookBundle(b frames.Bundle) frames.Bundle {
	if len(b) < 2 || string(b["text/plain"]) != `""` {
		return b
	}
	kept := maps.Clone(b)
	delete(kept, "text/plain")
	return kept
}

func (r *Recorder) addRich(f frames.Frame) error {
	f.Bundle = notebookBundle(f.Bundle)
	var o notebook.Output
	var err error
	if f.Type == frames.TypeResult {
		o, err = notebook.ExecuteResult(f.Bundle, f.Metadata, f.ExecutionCount)
	} else {
		o, err = notebook.DisplayData(f.Bundle, f.Metadata)
	}
	if err != nil {
		return fmt.Errorf("record outputs: %s %w", f.Type, err)
	}
	if f.DisplayID != "" {
		// As nbclient: an output shown under an id already in use updates
		// the earlier ones, then is added itself.
		if err := r.updateDisplay(f); err != nil {
			return err
		}
	}
	r.clearIfPending()
	r.appendOutput(o)
	if f.DisplayID != "" {
		r.displays[f.DisplayID] = append(r.displays[f.DisplayID], outputRef{r.cell, len(r.outputs[r.cell]) - 1})
	}
	return nil
}

// updateDisplay replaces data and metadata of every output shown with the
// frame's display id, display_data and execute_result alike, in this cell
// or an earlier one.
func (r *Recorder) updateDisplay(f frames.Frame) error {
	refs := r.displays[f.DisplayID]
	if len(refs) == 0 {
		return nil
	}
	touched := map[int]bool{}
	bundle := notebookBundle(f.Bundle)
	for _, ref := range refs {
		outs := r.outputs[ref.cell]
		o, err := outs[ref.index].WithBundle(bundle, f.Metadata)
		if err != nil {
			return fmt.Errorf("record outputs: %s %w", f.Type, err)
		}
		outs[ref.index] = o
		touched[ref.cell] = true
	}
	for cell := range touched {
		if cell != r.cell {
			_ = r.nb.SetOutputs(cell, r.outputs[cell]) // recorded before, so a code cell
		} else {
			r.changed = true
		}
	}
	return nil
}
