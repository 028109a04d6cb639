package notebook

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// SetMetadata and SetCellMetadata write Go values as nbformat's json.dumps
// writes them (sorted keys, Python's float repr, ensure_ascii=False), so
// that nbformat writes the notebook back byte for byte; Metadata reads a
// member back.
func TestSetMetadata(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  string // the member's JSON as Metadata returns it
	}{
		{"null", nil, `null`},
		{"a mapping", map[string]any{"b": true, "a": "é\"\n", "c": nil}, `{"a": "é\"\n","b": true,"c": null}`},
		{"floats as Python's repr", []any{2.006803, 0.00005, 1.0, 0.0, 1e16, 123456789.5}, `[2.006803,5e-05,1.0,0.0,1e+16,123456789.5]`},
		{"an int", 42, `42`},
		{"a big int", json.Number("123456789012345678901234567890"), `123456789012345678901234567890`},
		{"raw JSON re-spelled", json.RawMessage(`{"z": 1e-07, "a": "\u00e9"}`), `{"a": "é","z": 1e-07}`},
		{"float NaN and infinities as json.dumps", []any{math.NaN(), math.Inf(1), math.Inf(-1)}, `[NaN,Infinity,-Infinity]`},
		{"Python's NaN and infinities", json.RawMessage(`{"n": NaN, "i": Infinity, "m": [-Infinity]}`), `{"i": Infinity,"m": [-Infinity],"n": NaN}`},
	}
	nb := mustParse(t, readFile(t, "testdata/basic.ipynb"))
	var written [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := nb.SetMetadata("evalhost_test", tt.value); err != nil {
				t.Fatal(err)
			}
			if got := string(nb.Metadata("evalhost_test")); got != tt.want {
				t.Errorf("Metadata = %s, want %s", got, tt.want)
			}
			if err := nb.SetCellMetadata(2, "evalhost_test", tt.value); err != nil {
				t.Fatal(err)
			}
			written = append(written, nb.Bytes())
		})
	}
	t.Run("nbformat writes them the same", func(t *testing.T) {
		theirs := validateWithNbformat(t, written...)
		for i := range written {
			if string(theirs[i]) != string(written[i]) {
				t.Errorf("%s: nbformat writes\n%s\nours\n%s", tests[i].name, theirs[i], written[i])
			}
		}
	})
}

func TestSetCellMetadataRefusals(t *testing.T) {
	nb := mustParse(t, readFile(t, "testdata/future_cells.ipynb"))
	var ro *ReadOnlyCellError
	if err := nb.SetCellMetadata(1, "k", 1); !errors.As(err, &ro) {
		t.Errorf("a cell of an unknown type: %v, want a *ReadOnlyCellError", err)
	}
	if err := nb.SetCellMetadata(99, "k", 1); !errors.Is(err, ErrIndex) {
		t.Errorf("out of range: %v", err)
	}
	if err := nb.SetMetadata("k", json.RawMessage(`{bad`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("bad JSON: %v", err)
	}
	for _, n := range []string{"1x", "NaN", "-Infinity"} {
		if err := nb.SetMetadata("k", json.Number(n)); err == nil {
			t.Errorf("json.Number(%q) was accepted; a NaN goes as a float64", n)
		}
	}
	if err := nb.SetMetadata("k", struct{}{}); err == nil {
		t.Error("a struct was accepted")
	}
	before := string(nb.Bytes())
	if err := nb.DeleteCellMetadata(0, "absent"); err != nil || string(nb.Bytes()) != before {
		t.Errorf("deleting an absent member changed the notebook: %v", err)
	}
	if nb.Metadata("absent") != nil {
		t.Error("Metadata of an absent member is not nil")
	}
}

// A notebook papermill wrote with a NaN or infinite parameter (Python's
// json writes NaN, Infinity, -Infinity; nbformat reads them back) parses,
// is kept byte for byte, and Members reads what encoding/json refuses.
func TestNonFiniteNumbers(t *testing.T) {
	const file = `{
 "cells": [],
 "metadata": {
  "papermill": {
   "parameters": {
    "a": NaN,
    "b": Infinity,
    "c": -Infinity,
    "d": [
     NaN,
     -1.5
    ]
   },
   "version": "2.7.0"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`
	nb := mustParse(t, []byte(file))
	if got := string(nb.Bytes()); got != file {
		t.Fatalf("parse→bytes changed the file:\n%s", got)
	}
	pm := nb.Metadata("papermill")
	if json.Valid(pm) {
		t.Fatalf("Metadata %s: NaN should stay NaN", pm)
	}
	members, err := Members(pm)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(members["parameters"]); got != `{"a": NaN,"b": Infinity,"c": -Infinity,"d": [NaN,-1.5]}` {
		t.Errorf("parameters %s", got)
	}
	if got := string(members["version"]); got != `"2.7.0"` {
		t.Errorf("version %s", got)
	}
	if err := nb.SetMetadata("papermill", map[string]any{"parameters": members["parameters"]}); err != nil {
		t.Fatalf("SetMetadata of a member Members gave: %v", err)
	}
	validateWithNbformat(t, nb.Bytes())
	for _, bad := range []string{`[1]`, `"s"`, `{`} {
		if _, err := Members(json.RawMessage(bad)); err == nil {
			t.Errorf("Members(%s): want an error", bad)
		}
	}
}
