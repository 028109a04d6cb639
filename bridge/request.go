package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
)

// maxName bounds a tool name; maxDepth bounds nesting, since validating a
// megabyte of "[" recursively takes seconds.
const (
	maxName  = 256
	maxDepth = 512
)

// BadRequestError says what is wrong with a request body.
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return "bad tool call: " + e.Msg }

// ParseRequest parses a POST /v1/tool body into a Call.
func ParseRequest(body []byte) (Call, error) {
	if depth(body) > maxDepth {
		return Call{}, &BadRequestError{fmt.Sprintf("JSON nests deeper than %d levels; flatten the arguments", maxDepth)}
	}
	if !gjson.ValidBytes(body) {
		return Call{}, &BadRequestError{`body is not valid JSON; send {"session":…,"run":…,"name":…,"args":{…}}`}
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return Call{}, &BadRequestError{"body must be a JSON object, got " + kind(root)}
	}
	var c Call
	for _, f := range []struct {
		key string
		dst *string
	}{{"session", &c.Session}, {"run", &c.Run}, {"name", &c.Name}} {
		v := root.Get(f.key)
		if err := wantString(f.key, v); err != nil {
			return Call{}, err
		}
		*f.dst = v.String()
	}
	if len(c.Name) > maxName {
		return Call{}, &BadRequestError{fmt.Sprintf(`"name" is %d bytes; a tool name is at most %d`, len(c.Name), maxName)}
	}
	switch args := root.Get("args"); {
	case !args.Exists() || args.Type == gjson.Null:
		c.Args = json.RawMessage("{}")
	case args.IsObject():
		c.Args = json.RawMessage(args.Raw)
	default:
		return Call{}, &BadRequestError{`"args" must be a JSON object of keyword arguments, got ` + kind(args)}
	}
	return c, nil
}

func wantString(key string, v gjson.Result) error {
	switch {
	case !v.Exists():
		return &BadRequestError{fmt.Sprintf("%q is missing", key)}
	case v.Type != gjson.String:
		return &BadRequestError{fmt.Sprintf("%q must be a string, got %s", key, kind(v))}
	case v.Str == "":
		return &BadRequestError{fmt.Sprintf("%q must not be empty", key)}
	}
	return nil
}

func kind(v gjson.Result) string {
	switch {
	case v.IsObject():
		return "an object"
	case v.IsArray():
		return "an array"
	}
	switch v.Type {
	case gjson.String:
		return "a string"
	case gjson.Number:
		return "a number"
	case gjson.True, gjson.False:
		return "a boolean"
	}
	return "null"
}

// depth is the deepest nesting of arrays and objects outside strings.
func depth(b []byte) int {
	d, most, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if d++; d > most {
				most = d
			}
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}
