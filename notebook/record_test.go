package notebook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
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
		{"clear output now and at next output", []frames.Frame{
			out("gone\n"), {Type: frames.TypeClearOutput}, out("kept1\n"),
			{Type: frames.TypeClearOutput, Wait: true}, out("kept2\n"), done(2)}},
		{"update display", []frames.Frame{
			{Type: frames.TypeDisplay, DisplayID: "d1", Bundle: bundle("text/plain", `"0%"`)},
			out("working\n"),
			{Type: frames.TypeUpdateDisplay, DisplayID: "d1", Bundle: bundle("text/plain", `"100%"`)},
			{Type: frames.TypeInput, Prompt: "name?"},
			{Type: frames.TypeWarning, Message: "ignored"},
			done(3)}},
		{"timeout keeps partial output plus error", []frames.Frame{
			out("step 1\n"),
			{Type: frames.TypeError, Ename: "TimeoutError", Evalue: "Command timed out after 2 seconds"}}},
	}
	var written [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := New()
			nb.Insert(0, Markdown, "# doc")
			nb.Insert(1, Code, "run()")
			nb.cells[0].set("id", newString("aaaaaaaa"))
			nb.cells[1].set("id", newString("bbbbbbbb"))
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

func TestRecorderUpdatesEarlierCell(t *testing.T) {
	nb := New()
	nb.Insert(0, Code, "a")
	nb.Insert(1, Code, "b")
	snapshot := nb.clone()
	r := NewRecorder(nb)
	r.Start(0)
	r.Add(frames.Frame{Type: frames.TypeDisplay, DisplayID: "p", Bundle: bundle("text/plain", `"old"`)})
	r.Add(done(1))
	r.Start(1)
	r.Add(frames.Frame{Type: frames.TypeUpdateDisplay, DisplayID: "p", Bundle: bundle("text/plain", `"new"`)})
	r.Add(done(2))
	text := string(nb.Bytes())
	if !strings.Contains(text, `"new"`) || strings.Contains(text, `"old"`) {
		t.Errorf("update_display did not replace the earlier cell's display:\n%s", text)
	}
	if strings.Contains(string(snapshot.Bytes()), `"new"`) || strings.Contains(string(snapshot.Bytes()), `"old"`) {
		t.Errorf("recording changed a clone taken before it (copy on write broken)")
	}
}

func TestRecorderErrors(t *testing.T) {
	nb := New()
	nb.Insert(0, Markdown, "x")
	nb.Insert(1, Code, "y")
	r := NewRecorder(nb)
	tests := []struct {
		name string
		do   func() error
		want string
	}{
		{"frame before start", func() error { return r.Add(out("x")) }, "stdout frame before Start"},
		{"markdown cell", func() error { return r.Start(0) }, "cell 0 is a markdown cell; only code cells have outputs"},
		{"out of range", func() error { return r.Start(2) }, "cell 2 is out of range"},
		{"bad bundle", func() error {
			r.Start(1)
			return r.Add(frames.Frame{Type: frames.TypeDisplay, Bundle: bundle("text/plain", `"unterminated`)})
		}, `display bundle "text/plain" is not valid JSON`},
		{"metadata not object", func() error {
			return r.Add(frames.Frame{Type: frames.TypeResult, Bundle: bundle("text/plain", `"x"`), Metadata: json.RawMessage(`[1]`)})
		}, "result metadata is a array, want an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
