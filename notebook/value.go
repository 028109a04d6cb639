package notebook

import (
	"sort"
	"strings"
	"unsafe"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// value is a JSON value that remembers how it was written: scalars keep
// their original text (so 1e-05 stays 1e-05 and "\u00e9" stays escaped the
// way the file had it) and objects keep their key order. Values are treated
// as immutable once they are part of a notebook: edits build new values
// (copy on write), so clones can share untouched subtrees.
type value struct {
	kind kind
	raw  string // scalars: the JSON text, strings with their quotes
	arr  []*value
	obj  []member
}

type member struct {
	rawKey string // the key as written, with quotes
	name   string // the decoded key
	val    *value
}

func newString(s string) *value {
	return &value{kind: kindString, raw: pyString(s)}
}

// pyString is s quoted as appendPyString quotes it, in one allocation of
// about its size for text with few escapes (a cell's printed lines).
func pyString(s string) string {
	b := appendPyString(make([]byte, 0, len(s)+len(s)/16+2), s)
	return unsafe.String(unsafe.SliceData(b), len(b)) // b is not written again
}

func newRaw(k kind, raw string) *value { return &value{kind: k, raw: raw} }

var (
	nullValue  = &value{kind: kindNull, raw: "null"}
	emptyArray = &value{kind: kindArray}
)

func newObject() *value { return &value{kind: kindObject} }

// str decodes a string value; ok is false for other kinds.
func (v *value) str() (string, bool) {
	if v == nil || v.kind != kindString {
		return "", false
	}
	return decodeString(v.raw), true
}

// get returns the member value named name, or nil.
func (v *value) get(name string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	for i := range v.obj {
		if v.obj[i].name == name {
			return v.obj[i].val
		}
	}
	return nil
}

// shallowCopy returns a copy whose member or element slice may be changed
// without touching v.
func (v *value) shallowCopy() *value {
	c := *v
	c.arr = append([]*value(nil), v.arr...)
	c.obj = append([]member(nil), v.obj...)
	return &c
}

// set replaces the member named name in place, or adds it: at its sorted
// position when the keys are sorted (as nbformat writes them), else last.
// v must be a copy the caller owns.
func (v *value) set(name string, val *value) {
	for i := range v.obj {
		if v.obj[i].name == name {
			v.obj[i].val = val
			return
		}
	}
	m := member{rawKey: string(appendPyString(nil, name)), name: name, val: val}
	if !v.keysSorted() {
		v.obj = append(v.obj, m)
		return
	}
	at := sort.Search(len(v.obj), func(i int) bool { return v.obj[i].name > name })
	v.obj = append(v.obj, member{})
	copy(v.obj[at+1:], v.obj[at:])
	v.obj[at] = m
}

// del removes the member named name; v must be a copy the caller owns.
func (v *value) del(name string) {
	for i := range v.obj {
		if v.obj[i].name == name {
			v.obj = append(v.obj[:i], v.obj[i+1:]...)
			return
		}
	}
}

func (v *value) keysSorted() bool {
	for i := 1; i < len(v.obj); i++ {
		if v.obj[i-1].name > v.obj[i].name {
			return false
		}
	}
	return true
}

// sortKeys sorts every object in the tree by key, as nbformat writes new
// values; it is used only on values this package built.
func (v *value) sortKeys() {
	switch v.kind {
	case kindObject:
		sort.SliceStable(v.obj, func(i, j int) bool { return v.obj[i].name < v.obj[j].name })
		for _, m := range v.obj {
			m.val.sortKeys()
		}
	case kindArray:
		for _, e := range v.arr {
			e.sortKeys()
		}
	}
}

// joinStrings returns the text of a "multiline string" field: a string, or
// an array of strings concatenated. ok is false for anything else.
func joinStrings(v *value) (string, bool) {
	if v == nil {
		return "", false
	}
	switch v.kind {
	case kindString:
		return v.str()
	case kindArray:
		var b strings.Builder
		for _, e := range v.arr {
			s, ok := e.str()
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		return b.String(), true
	}
	return "", false
}

// linesValue is s split as nbformat writes multiline text: Python's
// str.splitlines(keepends=True), an empty string giving an empty array.
func linesValue(s string) *value {
	lines := splitLines(s)
	v := &value{kind: kindArray, arr: make([]*value, len(lines))}
	for i, l := range lines {
		v.arr[i] = newString(l)
	}
	return v
}
