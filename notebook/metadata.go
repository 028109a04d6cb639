package notebook

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Metadata returns the JSON of the notebook's metadata member key, or nil
// when there is none. NaN, Infinity and -Infinity, which Python's json
// writes, stay as the file has them: encoding/json refuses them, and
// [Members] does not.
func (nb *Notebook) Metadata(key string) json.RawMessage {
	v := nb.root.get("metadata").get(key)
	if v == nil {
		return nil
	}
	return compact(v)
}

// compact is v's JSON with no indent and no line breaks, compact enough
// for a caller to decode.
func compact(v *value) json.RawMessage {
	e := encoder{}
	e.value(v, 0)
	return e.buf
}

// Members splits a JSON object, as Metadata returns it, into its members'
// JSON, which SetMetadata takes back as json.RawMessage values. Unlike
// encoding/json it reads NaN, Infinity and -Infinity as Python's json
// does. Anything but an object is an error.
func Members(raw json.RawMessage) (map[string]json.RawMessage, error) {
	v, err := parseJSON(string(raw))
	if err != nil {
		return nil, err
	}
	if v.kind != kindObject {
		return nil, fmt.Errorf("is a JSON %s, want an object", v.kind)
	}
	out := make(map[string]json.RawMessage, len(v.obj))
	for _, m := range v.obj {
		out[m.name] = compact(m.val) // a repeated key: the last, as Python's json
	}
	return out, nil
}

// SetMetadata sets the notebook's metadata member key to v, written as
// nbformat's json.dumps writes it: v is nil, a bool, an int, a float64
// (Python's repr; NaN, Infinity, -Infinity as json.dumps writes them), a
// json.Number (as spelled: an int of any size, never NaN), a
// string, a json.RawMessage (its JSON, keys sorted and
// strings spelled as Python writes them; numbers as they are spelled, so
// give floats as Python's repr), or a []any or map[string]any of
// these. Anything else, or JSON that is not valid, is an error and nothing
// changes.
func (nb *Notebook) SetMetadata(key string, v any) error {
	val, err := goValue(v)
	if err != nil {
		return fmt.Errorf("set metadata %q: %w", key, err)
	}
	root := nb.root.shallowCopy()
	root.set("metadata", withMember(root.get("metadata"), key, val))
	nb.root = root
	return nil
}

// SetMetadataMembers is SetMetadata of each member of m, at once: one
// copy of the metadata, where a SetMetadata per member copied all the
// members before it (a header of 5,000 keys allocated 600 MB). On error
// nothing changes.
func (nb *Notebook) SetMetadataMembers(m map[string]any) error {
	add, err := goValue(m)
	if err != nil {
		return fmt.Errorf("set metadata: %w", err)
	}
	root := nb.root.shallowCopy()
	root.set("metadata", withMembers(root.get("metadata"), add))
	nb.root = root
	return nil
}

// DeleteMetadata removes the notebook's metadata member key, if it has one.
func (nb *Notebook) DeleteMetadata(key string) {
	md := nb.root.get("metadata")
	if md.get(key) == nil {
		return
	}
	md = md.shallowCopy()
	md.del(key)
	root := nb.root.shallowCopy()
	root.set("metadata", md)
	nb.root = root
}

// SetCellMetadata sets cell i's metadata member key to v, as SetMetadata
// does. A cell of an unknown type is a *ReadOnlyCellError.
func (nb *Notebook) SetCellMetadata(i int, key string, v any) error {
	if err := nb.knownCell("set metadata of", i); err != nil {
		return err
	}
	val, err := goValue(v)
	if err != nil {
		return fmt.Errorf("set metadata %q of cell %d: %w", key, i, err)
	}
	nb.setCellField(i, "metadata", withMember(nb.cells[i].get("metadata"), key, val))
	return nil
}

// SetCellMetadataMembers is SetCellMetadata of each member of m, at once,
// as SetMetadataMembers.
func (nb *Notebook) SetCellMetadataMembers(i int, m map[string]any) error {
	if err := nb.knownCell("set metadata of", i); err != nil {
		return err
	}
	add, err := goValue(m)
	if err != nil {
		return fmt.Errorf("set metadata of cell %d: %w", i, err)
	}
	nb.setCellField(i, "metadata", withMembers(nb.cells[i].get("metadata"), add))
	return nil
}

// DeleteCellMetadata removes cell i's metadata member key, if it has one.
// A cell of an unknown type is a *ReadOnlyCellError.
func (nb *Notebook) DeleteCellMetadata(i int, key string) error {
	if err := nb.knownCell("delete metadata of", i); err != nil {
		return err
	}
	md := nb.cells[i].get("metadata")
	if md.get(key) == nil {
		return nil
	}
	md = md.shallowCopy()
	md.del(key)
	nb.setCellField(i, "metadata", md)
	return nil
}

func (nb *Notebook) knownCell(what string, i int) error {
	if i < 0 || i >= len(nb.cells) {
		return nb.indexError(what, i, len(nb.cells)-1)
	}
	if t := cellType(nb.cells[i]); !t.Known() {
		return &ReadOnlyCellError{Index: i, Type: t}
	}
	return nil
}

// withMember returns a copy of the metadata object md (a new one when md
// is missing or not an object) with member key set to v.
func withMember(md *value, key string, v *value) *value {
	if md == nil || md.kind != kindObject {
		md = newObject()
	} else {
		md = md.shallowCopy()
	}
	md.set(key, v)
	return md
}

// withMembers is a copy of md (an object, else a new one) with add's
// members set, as withMember sets one: replaced in place, new ones last,
// or all sorted when md's keys were.
func withMembers(md, add *value) *value {
	if md == nil || md.kind != kindObject || len(md.obj) == 0 {
		return add // goValue's: new, and sorted
	}
	sorted := md.keysSorted()
	md = md.shallowCopy()
	at := make(map[string]int, len(md.obj))
	for i, m := range md.obj {
		at[m.name] = i
	}
	for _, m := range add.obj {
		if i, ok := at[m.name]; ok {
			md.obj[i].val = m.val
			continue
		}
		md.obj = append(md.obj, m)
	}
	if sorted {
		sort.SliceStable(md.obj, func(i, j int) bool { return md.obj[i].name < md.obj[j].name })
	}
	return md
}

// goValue builds the value json.dumps(sort_keys=True) writes for v.
func goValue(v any) (*value, error) {
	switch v := v.(type) {
	case nil:
		return nullValue, nil
	case bool:
		return newRaw(kindBool, strconv.FormatBool(v)), nil
	case int:
		return newRaw(kindNumber, strconv.Itoa(v)), nil
	case float64:
		return pyFloat(v)
	case string:
		return newString(v), nil
	case json.Number:
		// A number JSON has, as encoding/json's: a NaN goes as a float64.
		if n, err := parseJSON(string(v)); err != nil || n.kind != kindNumber || !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("%q is not a JSON number", string(v))
		}
		return newRaw(kindNumber, string(v)), nil
	case json.RawMessage:
		parsed, err := parseJSON(string(v))
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		return normalized(parsed), nil
	case []any:
		arr := &value{kind: kindArray, arr: make([]*value, len(v))}
		for i, e := range v {
			ev, err := goValue(e)
			if err != nil {
				return nil, err
			}
			arr.arr[i] = ev
		}
		return arr, nil
	case map[string]any:
		obj := newObject()
		for _, k := range slices.Sorted(maps.Keys(v)) {
			ev, err := goValue(v[k])
			if err != nil {
				return nil, err
			}
			obj.obj = append(obj.obj, member{rawKey: string(appendPyString(nil, k)), name: k, val: ev})
		}
		return obj, nil
	}
	return nil, fmt.Errorf("a %T cannot be written as notebook metadata", v)
}

// pyFloat is a float as json.dumps writes it: Python's repr, the shortest
// digits that read back, fixed notation for exponents -4..15 (".0" when
// whole), else d.ddde±XX; NaN, Infinity and -Infinity, which JSON lacks
// and Python's json (so nbformat and papermill) writes and reads.
func pyFloat(f float64) (*value, error) {
	switch {
	case math.IsNaN(f):
		return newRaw(kindNumber, "NaN"), nil
	case math.IsInf(f, 1):
		return newRaw(kindNumber, "Infinity"), nil
	case math.IsInf(f, -1):
		return newRaw(kindNumber, "-Infinity"), nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(s[strings.IndexByte(s, 'e')+1:])
	switch {
	case f != 0 && (exp < -4 || exp >= 16):
		return newRaw(kindNumber, s), nil
	}
	s = strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return newRaw(kindNumber, s), nil
}
