package notebook

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addNotebookSeeds(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.ipynb")
	invalid, _ := filepath.Glob("testdata/invalid/*.ipynb")
	v3, _ := filepath.Glob("testdata/v3/*.ipynb")
	for _, p := range append(append(paths, invalid...), v3...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"cells":[{"cell_type":"code","source":"a\u2028b\ud800"}],"x":[1e5,-0.0,true,null]}`))
	f.Add([]byte(`{"cells":[],"metadata":{"p":[NaN,Infinity,-Infinity,-Inf,NaNa]}}`))
	f.Add([]byte("{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": NaN,\n   \"metadata\": {\"a\": -Infinity},\n   \"outputs\": [{\"output_type\": \"execute_result\", \"data\": {\"application/json\": [NaN, Infinity]}}],\n   \"source\": \"x\"\n  }\n ],\n \"metadata\": {\"papermill\": {\"parameters\": {\"x\": NaN}}},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"))
}

// FuzzParse: the loader never panics, and what it accepts serialises to
// JSON it accepts again, unchanged by a second round.
func FuzzParse(f *testing.F) {
	addNotebookSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := Parse(data)
		if err != nil {
			return
		}
		out := nb.Bytes()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of our output failed: %v\n%s", err, out)
		}
		if !bytes.Equal(again.Bytes(), out) {
			t.Fatalf("serialisation is not stable")
		}
		if nb.Len() != again.Len() {
			t.Fatalf("cell count changed")
		}
	})
}

// FuzzViewApply (issue 17): a notebook the loader accepts, and so view
// shows, survives apply of its unchanged view byte for byte.
func FuzzViewApply(f *testing.F) {
	addNotebookSeeds(f)
	f.Add([]byte(`{"cells":[{"cell_type":"x]\"y\u2028","source":[1]},{"cell_type":""},{"cell_type":"raw"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		nb, err := Parse(data)
		if err != nil {
			return
		}
		text := nb.Text()
		out, err := nb.ApplyText(text)
		if err != nil {
			t.Fatalf("apply of the unchanged view: %v\n%s", err, text)
		}
		if !bytes.Equal(out.Bytes(), nb.Bytes()) {
			t.Fatalf("view → apply changed the notebook\n got: %s\nwant: %s", out.Bytes(), nb.Bytes())
		}
	})
}

// FuzzApplyText: the text parser never panics, and applied text views back
// as cells equal to what it parsed.
func FuzzApplyText(f *testing.F) {
	base, err := os.ReadFile("testdata/nonascii.ipynb")
	if err != nil {
		f.Fatal(err)
	}
	nb, err := Parse(base)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(nb.Text())
	f.Add("# %% [code] cell:0\n# %% [markdown]\n\\# %%\n")
	f.Add("\n# %%")
	f.Add("# %% [raw] cell:2\r\n\\\\# %% x\n")
	f.Fuzz(func(t *testing.T, text string) {
		out, err := nb.ApplyText(text)
		if err != nil {
			return
		}
		parsed, _ := parseText(text)
		if out.Len() != len(parsed) {
			t.Fatalf("%d cells from %d parsed", out.Len(), len(parsed))
		}
		back, err := out.ApplyText(out.Text())
		if err != nil {
			t.Fatalf("view of applied text does not apply: %v", err)
		}
		if !bytes.Equal(back.Bytes(), out.Bytes()) {
			t.Fatalf("view→apply of the result changed it")
		}
		if _, err := Parse(out.Bytes()); err != nil {
			t.Fatalf("applied notebook is invalid: %v", err)
		}
	})
}
