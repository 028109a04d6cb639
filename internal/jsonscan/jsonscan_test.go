package jsonscan

import (
	"math"
	"testing"

	"github.com/tidwall/gjson"
)

type pair struct {
	key string
	v   gjson.Result
}

// gjsonMembers is what gjson reads: Valid, then ForEach over an object.
func gjsonMembers(s string) ([]pair, bool) {
	if !gjson.Valid(s) {
		return nil, false
	}
	root := gjson.Parse(s)
	if !root.IsObject() {
		return nil, false
	}
	var out []pair
	root.ForEach(func(k, v gjson.Result) bool {
		out = append(out, pair{k.Str, v})
		return true
	})
	return out, true
}

func gjsonElems(s string) ([]gjson.Result, bool) {
	if !gjson.Valid(s) {
		return nil, false
	}
	root := gjson.Parse(s)
	if !root.IsArray() {
		return nil, false
	}
	return root.Array(), true
}

func same(a, b gjson.Result) bool {
	return a.Type == b.Type && a.Raw == b.Raw && a.Str == b.Str &&
		(a.Num == b.Num || math.IsNaN(a.Num) && math.IsNaN(b.Num))
}

func check(t *testing.T, s string) {
	t.Helper()
	var got []pair
	ok := Object(s, func(k string, v gjson.Result) { got = append(got, pair{k, v}) })
	want, wantOK := gjsonMembers(s)
	if ok != wantOK {
		t.Fatalf("Object(%q) = %v, gjson says %v", s, ok, wantOK)
	}
	if ok {
		if len(got) != len(want) {
			t.Fatalf("Object(%q): %d members, gjson %d", s, len(got), len(want))
		}
		for i := range got {
			if got[i].key != want[i].key || !same(got[i].v, want[i].v) {
				t.Fatalf("Object(%q) member %d = %q %+v, gjson %q %+v", s, i, got[i].key, got[i].v, want[i].key, want[i].v)
			}
		}
	}
	var elems []gjson.Result
	ok = Array(s, func(v gjson.Result) { elems = append(elems, v) })
	wantElems, wantOK := gjsonElems(s)
	if ok != wantOK || ok && len(elems) != len(wantElems) {
		t.Fatalf("Array(%q) = %v with %d, gjson %v with %d", s, ok, len(elems), wantOK, len(wantElems))
	}
	for i := range elems {
		if ok && !same(elems[i], wantElems[i]) {
			t.Fatalf("Array(%q) element %d = %+v, gjson %+v", s, i, elems[i], wantElems[i])
		}
	}
}

var seeds = []string{
	`{"op":"eval","id":"1","session":"s","cells":[{"code":"1+1"}]}`,
	`{"type":"result","id":"b-0-a2","bundle":{"text/plain":"2"},"executionCount":2,"pos":1,"unmarked":3}`,
	` { "a" : [1, -2.5e+3, true, false, null, {"b":[]}, "x\n\u00e9\"y"] , "a\"k": {} } `,
	`{}`, `[]`, `[1,2]`, `{"a":1,}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":tru}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a" 1}`, `{"a":1 "b":2}`, `{"a":1}x`, `"s"`, `1`, ``,
	`{"a":{"b":{"c":[[[]]]}}}`, `[{"a":1},{"b":2}]`, `{"a":"\ud800"}`, "{\"é\":\"\xff\"}",
}

func TestObjectAndArrayReadAsGjson(t *testing.T) {
	for _, s := range seeds {
		check(t, s)
	}
}

// Object and Array accept exactly what gjson.Valid does and read every
// member and element as gjson's ForEach and Array do.
func FuzzObjectAndArray(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(check)
}

// BenchmarkFrames reads a warm cell's three frame lines.
func BenchmarkFrames(b *testing.B) {
	lines := []string{
		`{"type":"started","id":"b-0-a22a1234567890abcdef"}`,
		`{"type":"result","id":"b-0-a22a1234567890abcdef","bundle":{"text/plain":"2"},"executionCount":2,"pos":1,"unmarked":3}`,
		`{"type":"done","id":"b-0-a22a1234567890abcdef","status":"ok","executionCount":2,"cancelled":false,"unmarked":3}`,
	}
	n := 0
	for b.Loop() {
		for _, l := range lines {
			if !Object(l, func(string, gjson.Result) { n++ }) {
				b.Fatal("rejected")
			}
		}
	}
}
