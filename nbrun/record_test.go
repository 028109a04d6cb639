package nbrun

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/notebook"
)

func bundle(kv ...string) frames.Bundle {
	b := frames.Bundle{}
	for i := 0; i < len(kv); i += 2 {
		b[kv[i]] = json.RawMessage(kv[i+1])
	}
	return b
}

func out(s string) frames.Frame { return frames.Frame{Type: frames.TypeStdout, Data: s} }
func errOut(s string) frames.Frame {
	return frames.Frame{Type: frames.TypeStderr, Data: s}
}
func done(n int) frames.Frame {
	return frames.Frame{Type: frames.TypeDone, Status: "ok", ExecutionCount: n}
}

// TestRecorder runs frame sequences into cell 1 of a two-cell notebook and
// compares the notebook with a golden file; nbformat validates them all.
func TestRecorder(t *testing.T) {
	tests := []struct {
		name   string
		frames []frames.Frame
	}{
		{"streams merge per name", []frames.Frame{
			{Type: frames.TypeStarted}, out("a"), out("b\nc\n"), errOut("warn\n"), errOut("more"), out("d\r\n"), done(1)}},
		{"display result error", []frames.Frame{
			out("before\n"),
			{Type: frames.TypeDisplay, Bundle: bundle("text/plain", `"<Figure>"`, "image/png", `"iVBORw0KGgo="`),
				Metadata: json.RawMessage(`{"image/png":{"width":640,"height":480}}`)},
			{Type: frames.TypeResult, ExecutionCount: 7, Bundle: bundle("text/plain", `"{'a': 1}"`,
				"application/json", `{"z":1,"a":[1.5,1e-05,"\u00e9"]}`, "text/html", `"<b>x</b>\n<i>y</i>"`)},
			{Type: frames.TypeError, Ename: "ValueError", Evalue: "bad \"thing\"", Traceback: []string{"Traceback:", "\x1b[31mValueError\x1b[0m: bad"}},
			{Type: frames.TypeDone, Status: "error", ExecutionCount: 7}}},
		{"structured value under a non-JSON type", []frames.Frame{
			{Type: frames.TypeDisplay, Bundle: bundle("text/plain", `""`, "application/x-omp-status", `{"phase":"fit","n":3}`,
				"application/vnd.custom+json", `{"k":[1]}`)},
			done(4)}},
		{"a raw bundle without plain text gets none", []frames.Frame{
			{Type: frames.TypeDisplay, DisplayID: "r", Bundle: bundle("text/plain", `""`, "text/html", `"<b>raw</b>"`)},
			{Type: frames.TypeDisplay, Bundle: bundle("text/plain", `""`)},
			{Type: frames.TypeUpdateDisplay, DisplayID: "r", Bundle: bundle("text/plain", `""`, "text/markdown", `"**new**"`)},
			{Type: frames.TypeResult, ExecutionCount: 5, Bundle: bundle("text/plain", `""`, "application/json", `{"a":1}`)},
			done(5)}},
		{"clear output now and at next output", []frames.Frame{
			out("gone\n"), {Type: frames.TypeClearOutput}, out("kept1\n"),
			{Type: frames.TypeClearOutput, Wait: true}, out("kept2\n"), done(2)}},
		{"update display", []frames.Frame{
			{Type: frames.TypeDisplay, DisplayID: "d1", Bundle: bundle("text/plain", `"0%"`)},
			out("working\n"),
			{Type: frames.TypeUpdateDisplay, DisplayID: "d1", Bundle: bundle("text/plain", `"100%"`)},
			{Type: frames.TypeInput, Prompt: "name?"},
			done(3)}},
		{"warning is stderr text", []frames.Frame{
			out("plotting\n"),
			{Type: frames.TypeWarning, Message: "display of 12.0 MiB dropped: over the 10.0 MiB limit"},
			errOut("after\n"), done(5)}},
		{"timeout keeps partial output plus error", []frames.Frame{
			out("step 1\n"),
			{Type: frames.TypeError, Ename: "TimeoutError", Evalue: "Command timed out after 2 seconds"}}},
	}
	var written [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := baseNotebook(t)
			r := NewRecorder(nb)
			if err := r.Start(1); err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.frames {
				if err := r.Add(f); err != nil {
					t.Fatal(err)
				}
			}
			r.Flush()
			got := nb.Bytes()
			golden(t, "record/"+strings.ReplaceAll(tt.name, " ", "_")+".ipynb", got)
			written = append(written, got)
		})
	}
	t.Run("nbformat validates all", func(t *testing.T) {
		theirs := validateWithNbformat(t, written...)
		for i := range written {
			if string(theirs[i]) != string(written[i]) {
				t.Errorf("%s: nbformat writes it differently\nours:   %s\ntheirs: %s", tests[i].name, written[i], theirs[i])
			}
		}
	})
}

type recordedOutput struct {
	OutputType     string                     `json:"output_type"`
	ExecutionCount *int                       `json:"execution_count"`
	Data           map[string]json.RawMessage `json:"data"`
}

// plain is the output's text/plain, joined from its lines.
func (o recordedOutput) plain() string {
	var lines []string
	json.Unmarshal(o.Data["text/plain"], &lines)
	return strings.Join(lines, "")
}

func outputsOf(t *testing.T, nb *notebook.Notebook) [][]recordedOutput {
	t.Helper()
	var doc struct {
		Cells []struct {
			Outputs []recordedOutput `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(nb.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var outs [][]recordedOutput
	for _, c := range doc.Cells {
		outs = append(outs, c.Outputs)
	}
	return outs
}

func twoCodeCells(t *testing.T) *notebook.Notebook {
	t.Helper()
	nb := notebook.New()
	for i, src := range []string{"a", "b"} {
		if err := nb.Insert(i, notebook.Code, src); err != nil {
			t.Fatal(err)
		}
	}
	return nb
}

func record(t *testing.T, r *Recorder, cell int, fs ...frames.Frame) {
	t.Helper()
	if err := r.Start(cell); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if err := r.Add(f); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecorderDisplayID: a display id names every output shown under it,
// display_data and execute_result, in this cell and earlier ones, as
// nbclient's _display_id_map does; an update replaces data and metadata of
// all of them and nothing else.
func TestRecorderDisplayID(t *testing.T) {
	text := func(s string) frames.Bundle { return bundle("text/plain", `"`+s+`"`) }
	tests := []struct {
		name  string
		cell0 []frames.Frame
		cell1 []frames.Frame
		want  [][]string // per cell: each output as type:text/plain
	}{
		{"update reaches display and result in two cells",
			[]frames.Frame{{Type: frames.TypeDisplay, DisplayID: "p", Bundle: text("old")}, done(1)},
			[]frames.Frame{
				{Type: frames.TypeResult, DisplayID: "p", ExecutionCount: 2, Bundle: text("old")},
				{Type: frames.TypeDisplay, DisplayID: "q", Bundle: text("other")},
				{Type: frames.TypeUpdateDisplay, DisplayID: "p", Bundle: text("new")}, done(2)},
			[][]string{{"display_data:new"}, {"execute_result:new", "display_data:other"}}},
		{"a new display under a used id updates the earlier ones",
			[]frames.Frame{{Type: frames.TypeDisplay, DisplayID: "p", Bundle: text("first")}, done(1)},
			[]frames.Frame{{Type: frames.TypeDisplay, DisplayID: "p", Bundle: text("second")}, done(2)},
			[][]string{{"display_data:second"}, {"display_data:second"}}},
		{"a cleared output is no longer updated",
			[]frames.Frame{{Type: frames.TypeDisplay, DisplayID: "p", Bundle: text("kept")}, done(1)},
			[]frames.Frame{
				{Type: frames.TypeDisplay, DisplayID: "p", Bundle: text("kept")},
				{Type: frames.TypeClearOutput},
				out("x"),
				{Type: frames.TypeUpdateDisplay, DisplayID: "p", Bundle: text("new")}, done(2)},
			[][]string{{"display_data:new"}, {"stream:"}}},
		{"an update of an unknown id changes nothing",
			[]frames.Frame{{Type: frames.TypeDisplay, Bundle: text("plain")}, done(1)},
			[]frames.Frame{{Type: frames.TypeUpdateDisplay, DisplayID: "p", Bundle: text("new")}, done(2)},
			[][]string{{"display_data:plain"}, nil}},
	}
	var written [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := twoCodeCells(t)
			r := NewRecorder(nb)
			record(t, r, 0, tt.cell0...)
			record(t, r, 1, tt.cell1...)
			r.Flush()
			got := outputsOf(t, nb)
			for cell, want := range tt.want {
				var have []string
				for _, o := range got[cell] {
					have = append(have, o.OutputType+":"+o.plain())
				}
				if strings.Join(have, ",") != strings.Join(want, ",") {
					t.Errorf("cell %d outputs %q, want %q", cell, have, want)
				}
			}
			if o := got[1]; len(o) > 0 && o[0].OutputType == "execute_result" && (o[0].ExecutionCount == nil || *o[0].ExecutionCount != 2) {
				t.Errorf("the update lost the execute_result's execution_count: %+v", o[0])
			}
			written = append(written, nb.Bytes())
		})
	}
	t.Run("nbformat validates all", func(t *testing.T) { validateWithNbformat(t, written...) })
}

func TestRecorderErrors(t *testing.T) {
	nb := baseNotebook(t)
	r := NewRecorder(nb)
	tests := []struct {
		name string
		do   func() error
		want string
	}{
		{"frame before start", func() error { return r.Add(out("x")) }, "stdout frame before Start"},
		{"markdown cell", func() error { return r.Start(0) }, "cell 0: it is a markdown cell; only code cells have outputs"},
		{"out of range", func() error { return r.Start(2) }, "cell 2 is out of range"},
		{"bad bundle", func() error {
			r.Start(1)
			return r.Add(frames.Frame{Type: frames.TypeDisplay, Bundle: bundle("text/plain", `"unterminated`)})
		}, `display bundle "text/plain" is not valid JSON`},
		{"metadata not object", func() error {
			return r.Add(frames.Frame{Type: frames.TypeResult, Bundle: bundle("text/plain", `"x"`), Metadata: json.RawMessage(`[1]`)})
		}, "result metadata is a array, want an object"},
		{"bad update leaves the display", func() error {
			r.Add(frames.Frame{Type: frames.TypeDisplay, DisplayID: "d", Bundle: bundle("text/plain", `"shown"`)})
			err := r.Add(frames.Frame{Type: frames.TypeUpdateDisplay, DisplayID: "d", Bundle: bundle("text/plain", `nope`)})
			if r.Flush(); !strings.Contains(string(nb.Bytes()), `"shown"`) {
				t.Error("a failed update changed the display")
			}
			return err
		}, `update_display bundle "text/plain" is not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
