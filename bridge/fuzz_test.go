package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParseRequest: the body parser never panics, accepts exactly what
// encoding/json agrees is a valid call, and what it accepts round-trips.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"session":"s","run":"r","name":"n","args":{"a":1}}`,
		`{"session":"s","run":"r","name":"n"}`,
		`{"session":"s","run":"r","name":"n","args":null}`,
		`{"session":"s","run":"r","name":"n","args":[]}`,
		`{"session":"","run":"r","name":"n"}`,
		`{"session":"s\u0000","run":"r\"","name":"\ud83d\ude00","args":{"x":{"y":[1,{}]}}}`,
		`{"session":1}`, `[]`, `null`, `"x"`, `{`, ``, ` {"session":"s","run":"r","name":"n"} `,
		`{"session":"s","session":"t","run":"r","name":"n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := ParseRequest(body)
		ref, refOK := reference(body)
		refOK = refOK && depth(body) <= maxDepth
		// encoding/json keeps the last duplicate key, gjson the first: not comparable.
		compare := !hasDuplicateKeys(body)
		if err != nil {
			var bad *BadRequestError
			if !errors.As(err, &bad) || bad.Msg == "" {
				t.Fatalf("error %v is not a *BadRequestError with a message", err)
			}
			if compare && refOK {
				t.Fatalf("rejected %q (%v), but encoding/json reads a valid call %+v", body, err, ref)
			}
			return
		}
		if c.Session == "" || c.Run == "" || c.Name == "" || len(c.Name) > maxName {
			t.Fatalf("accepted incomplete call %+v from %q", c, body)
		}
		var args map[string]any
		if err := json.Unmarshal(c.Args, &args); err != nil || args == nil {
			t.Fatalf("args %q is not a JSON object: %v", c.Args, err)
		}
		if !compare {
			return
		}
		if !refOK {
			t.Fatalf("accepted %q, which encoding/json does not read as a call", body)
		}
		if c.Session != ref.Session || c.Run != ref.Run || c.Name != ref.Name {
			t.Fatalf("parsed %+v, encoding/json reads %+v", c, ref)
		}
		again, err := json.Marshal(map[string]any{"session": c.Session, "run": c.Run, "name": c.Name, "args": c.Args})
		if err != nil {
			t.Fatal(err)
		}
		if c2, err := ParseRequest(again); err != nil || c2.Session != c.Session || c2.Run != c.Run || c2.Name != c.Name {
			t.Fatalf("round trip of %+v: %+v, %v", c, c2, err)
		}
	})
}

// reference reads a call with encoding/json, for differential checking.
func reference(body []byte) (Call, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return Call{}, false
	}
	var c Call
	for _, f := range []struct {
		key string
		dst *string
	}{{"session", &c.Session}, {"run", &c.Run}, {"name", &c.Name}} {
		raw, ok := m[f.key]
		if !ok || json.Unmarshal(raw, f.dst) != nil || *f.dst == "" || raw[0] != '"' {
			return Call{}, false
		}
	}
	if len(c.Name) > maxName {
		return Call{}, false
	}
	if raw, ok := m["args"]; ok && string(raw) != "null" && raw[0] != '{' {
		return Call{}, false
	}
	return c, true
}

func hasDuplicateKeys(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := t.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}
