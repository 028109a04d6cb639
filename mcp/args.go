package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// handlerFor is a tool handler on decoded arguments; an error becomes a
// tool result with isError, never a protocol error.
type handlerFor[In, Out any] func(context.Context, *sdk.CallToolRequest, In) (*sdk.CallToolResult, Out, error)

// addTool registers a tool whose arguments are checked against its input
// schema here, not by the SDK: a model that sent bad arguments reads the
// error, so it names the field by its path (cells[1].timeout), what was
// sent and what is wanted, which the SDK's validator does not.
func addTool[In, Out any](s *Server, t *sdk.Tool, h handlerFor[In, Out]) {
	schema := t.InputSchema.(*jsonschema.Schema)
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema of %s: %v", t.Name, err))
	}
	t.OutputSchema = out
	handler := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := bytes.TrimSpace(req.Params.Arguments)
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = []byte("{}")
		}
		var raw any
		if err := json.Unmarshal(args, &raw); err != nil {
			if raw, err = decodeOutOfRange(args, err); err != nil {
				return toolError(fmt.Errorf("arguments are not valid JSON: %w", err)), nil
			}
		}
		if err := checkValue(schema, raw, ""); err != nil {
			return toolError(fmt.Errorf("%w (see the %s tool's input schema)", err, t.Name)), nil
		}
		in, err := decodeArgs[In](args, raw)
		if err != nil {
			return toolError(fmt.Errorf("arguments: %w", err)), nil
		}
		res, o, err := h(ctx, req, in)
		if err != nil {
			return toolError(err), nil
		}
		if res == nil {
			res = &sdk.CallToolResult{}
		}
		res.StructuredContent = o
		if res.Content == nil {
			data, _ := json.Marshal(o)
			res.Content = []sdk.Content{&sdk.TextContent{Text: string(data)}}
		}
		return res, nil
	}
	s.sdk.AddTool(t, handler)
	s.handlers[t.Name] = handler
}

// decodeArgs decodes checked arguments into In. A whole number written
// with a fraction or an exponent (1.0, 1e2: a Python client sends a float
// so) is an integer to the schema, not to encoding/json: then the checked
// value (raw), re-encoded with every whole number as digits, is decoded.
func decodeArgs[In any](args []byte, raw any) (In, error) {
	var in In
	err := json.Unmarshal(args, &in)
	if err == nil {
		return in, nil
	}
	var again In
	if data, merr := json.Marshal(raw); merr == nil && json.Unmarshal(data, &again) == nil {
		return again, nil
	}
	return in, err
}

func toolError(err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
}

// checkValue checks v against the subset of JSON Schema the tools use:
// object (properties, required, additionalProperties false), array (items,
// minItems, maxItems), string (enum, maxLength), boolean, integer and
// number (minimum, exclusiveMinimum, maximum). What it echoes of a value
// is clipped.
func checkValue(s *jsonschema.Schema, v any, path string) error {
	name := path
	if name == "" {
		name = "arguments"
	}
	switch s.Type {
	case "object":
		return checkObject(s, v, path, name)
	case "array":
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s must be an array, not %s", name, describe(v))
		}
		if s.MinItems != nil && len(list) < *s.MinItems {
			return fmt.Errorf("%s must hold at least %d item(s); it is empty", name, *s.MinItems)
		}
		if s.MaxItems != nil && len(list) > *s.MaxItems {
			return fmt.Errorf("%s holds %d items, more than the %d it may; split them across several calls", name, len(list), *s.MaxItems)
		}
		for i, item := range list {
			if err := checkValue(s.Items, item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be a string, not %s", name, describe(v))
		}
		if s.MaxLength != nil {
			if n := utf8.RuneCountInString(str); n > *s.MaxLength {
				return fmt.Errorf("%s is %d characters long; it may be at most %d", name, n, *s.MaxLength)
			}
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(str)) {
			return fmt.Errorf("%s is %q; use one of %s", name, clip(str, 40), quoteAll(s.Enum))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be true or false, not %s", name, describe(v))
		}
	case "integer", "number":
		return checkNumber(s, v, name)
	default:
		if big, ok := v.(bigNumber); ok {
			return refuseBig(s, big, name) // no type decodes it
		}
	}
	return nil
}

func checkObject(s *jsonschema.Schema, v any, path, name string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s must be an object, not %s", name, describe(v))
	}
	for _, req := range s.Required {
		if _, ok := obj[req]; !ok {
			return fmt.Errorf("%s is required: %s", join(path, req), s.Properties[req].Description)
		}
	}
	for _, k := range sortedKeys(obj) {
		ps, ok := s.Properties[k]
		if !ok && len(s.Properties) == 0 {
			return fmt.Errorf("%s has no field %q; it takes none: send {}", name, k)
		}
		if !ok {
			return fmt.Errorf("%s has no field %q; its fields are %s", name, k, strings.Join(sortedKeys(s.Properties), ", "))
		}
		if err := checkValue(ps, obj[k], join(path, k)); err != nil {
			return err
		}
	}
	return nil
}

func checkNumber(s *jsonschema.Schema, v any, name string) error {
	if big, ok := v.(bigNumber); ok {
		return refuseBig(s, big, name)
	}
	n, ok := v.(float64)
	if !ok {
		return fmt.Errorf("%s must be a number, not %s", name, describe(v))
	}
	switch {
	case s.Type == "integer" && n != math.Trunc(n):
		return fmt.Errorf("%s must be a whole number, not %v", name, n)
	case s.Minimum != nil && n < *s.Minimum:
		return fmt.Errorf("%s is %v; it must be at least %v", name, n, *s.Minimum)
	case s.ExclusiveMinimum != nil && n <= *s.ExclusiveMinimum:
		return fmt.Errorf("%s is %v; it must be more than %v", name, n, *s.ExclusiveMinimum)
	case s.Maximum != nil && n > *s.Maximum:
		return fmt.Errorf("%s is %v; it must be at most %v", name, n, *s.Maximum)
	case s.Type == "integer" && math.Abs(n) > maxExactID:
		// Past it a float64 is not every integer, nor does an int decode it.
		return fmt.Errorf("%s is %v; it must be at most %d", name, n, int64(maxExactID))
	}
	return nil
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", clip(x, 40))
	case float64:
		return fmt.Sprintf("the number %v", x)
	case bigNumber:
		return "the number " + clip(string(x), 40)
	case bool:
		return fmt.Sprintf("%v", x)
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

func quoteAll(vals []any) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
