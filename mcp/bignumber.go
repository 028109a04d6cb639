package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// bigNumber is a JSON number no float64 holds (1e400), as sent: the
// checked arguments hold it so that checkValue refuses it by its field's
// path and what the field takes. encoding/json refused the whole call for
// it, as if it were not JSON.
type bigNumber string

// decodeOutOfRange decodes arguments that encoding/json refused with err
// only for a number out of a float64's range: their numbers as float64,
// the out-of-range ones as bigNumber. Any other error is returned as is.
func decodeOutOfRange(args []byte, err error) (any, error) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || !strings.HasPrefix(te.Value, "number") {
		return nil, err
	}
	// Unmarshal checked the syntax of the whole input before decoding, so
	// only the numbers' range is at issue here.
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var raw any
	if dec.Decode(&raw) != nil {
		return nil, err
	}
	return floats(raw), nil
}

// floats turns the json.Numbers of v into float64s, or bigNumbers where a
// float64 cannot hold them.
func floats(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return bigNumber(x)
		}
		return f
	case []any:
		for i := range x {
			x[i] = floats(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = floats(x[k])
		}
	}
	return v
}

// refuseBig is the error for a number field sent a bigNumber: it names
// what the field takes.
func refuseBig(s *jsonschema.Schema, n bigNumber, name string) error {
	return fmt.Errorf("%s is %s, out of the range of numbers (a float64's, about ±1.8e308); %s", name, clip(string(n), 40), bounds(s))
}

// bounds says what numbers a schema takes.
func bounds(s *jsonschema.Schema) string {
	var lo, hi string
	switch {
	case s.ExclusiveMinimum != nil:
		lo = fmt.Sprintf("more than %v", *s.ExclusiveMinimum)
	case s.Minimum != nil:
		lo = fmt.Sprintf("at least %v", *s.Minimum)
	}
	switch {
	case s.Maximum != nil:
		hi = fmt.Sprintf("at most %v", *s.Maximum)
	case s.Type == "integer":
		hi = fmt.Sprintf("at most %d", int64(maxExactID))
	}
	switch {
	case lo != "" && hi != "":
		return "it must be " + lo + " and " + hi
	case lo != "" || hi != "":
		return "it must be " + lo + hi
	}
	return "send a smaller one"
}
