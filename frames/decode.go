package frames

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"
)

// ErrMalformed is wrapped by every ProtocolError, for callers that only need
// to know a line was bad.
var ErrMalformed = errors.New("malformed protocol line")

// quoteLimit bounds how much of a bad line an error quotes.
const quoteLimit = 200

// ProtocolError reports one bad line. Reading may go on after it.
type ProtocolError struct {
	Line   string // a prefix of the offending line
	Reason string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("protocol error: %s: %q", e.Reason, e.Line)
}

func (e *ProtocolError) Unwrap() error { return ErrMalformed }

func badLine(line []byte, reason string) *ProtocolError {
	if len(line) > quoteLimit {
		line = line[:quoteLimit]
	}
	return &ProtocolError{Line: string(line), Reason: reason}
}

// Decode parses one frame line (without its newline).
func Decode(line []byte) (Frame, error) {
	if !gjson.ValidBytes(line) {
		return Frame{}, badLine(line, "not valid JSON")
	}
	root := gjson.ParseBytes(line)
	if !root.IsObject() {
		return Frame{}, badLine(line, "not a JSON object")
	}
	typ := root.Get("type")
	if typ.Type != gjson.String {
		return Frame{}, badLine(line, `missing "type"`)
	}
	f := Frame{Type: ParseType(typ.Str)}
	if f.Type == TypeUnknown {
		return Frame{}, badLine(line, fmt.Sprintf("unknown frame type %q", typ.Str))
	}
	id := root.Get("id")
	if id.Exists() && id.Type != gjson.String {
		return Frame{}, badLine(line, `"id" is not a string`)
	}
	f.ID = id.Str
	if f.ID == "" && needsID(f.Type) {
		return Frame{}, badLine(line, fmt.Sprintf(`%s frame without "id"`, f.Type))
	}
	if err := decodeBody(&f, root); err != "" {
		return Frame{}, badLine(line, err)
	}
	return f, nil
}

func needsID(t Type) bool { return t != TypeReady && t != TypeWarning }

// decodeBody fills the type-specific fields; it returns a reason on failure.
func decodeBody(f *Frame, root gjson.Result) string {
	switch f.Type {
	case TypeDisplay, TypeUpdateDisplay, TypeClearOutput, TypeResult, TypeError, TypeInput, TypeSync, TypeDone:
		if p := root.Get("pos"); p.Exists() {
			f.Pos = int(p.Int())
		}
		if u := root.Get("unmarked"); u.Exists() {
			f.Unmarked = uint8(u.Int() & 3)
		}
	}
	switch f.Type {
	case TypeStdout, TypeStderr:
		d := root.Get("data")
		if d.Type != gjson.String {
			return `missing string "data"`
		}
		f.Data = d.Str
	case TypeDisplay, TypeUpdateDisplay, TypeResult:
		b := root.Get("bundle")
		if !b.IsObject() {
			return `missing object "bundle"`
		}
		f.Bundle = make(Bundle)
		b.ForEach(func(k, v gjson.Result) bool {
			f.Bundle[k.Str] = json.RawMessage(v.Raw)
			return true
		})
		if m := root.Get("metadata"); m.IsObject() {
			f.Metadata = json.RawMessage(m.Raw)
		}
		f.DisplayID = root.Get("displayId").String()
		if f.Type == TypeUpdateDisplay && f.DisplayID == "" {
			return `update_display without "displayId"`
		}
		f.ExecutionCount = int(root.Get("executionCount").Int())
	case TypeClearOutput:
		f.Wait = root.Get("wait").Bool()
	case TypeError:
		f.Ename = root.Get("ename").String()
		f.Evalue = root.Get("evalue").String()
		root.Get("traceback").ForEach(func(_, v gjson.Result) bool {
			f.Traceback = append(f.Traceback, v.String())
			return true
		})
	case TypeInput:
		f.Prompt = root.Get("prompt").String()
	case TypeWarning:
		f.Message = root.Get("message").String()
	case TypeDone:
		f.Status = root.Get("status").String()
		if f.Status != StatusOK && f.Status != StatusError {
			return fmt.Sprintf("done frame with status %q", f.Status)
		}
		f.ExecutionCount = int(root.Get("executionCount").Int())
		f.Cancelled = root.Get("cancelled").Bool()
	case TypeReady:
		f.Runner = root.Get("runner").String()
		f.Python = root.Get("python").String()
		f.PID = int(root.Get("pid").Int())
		f.Executable = root.Get("executable").String()
		f.Marks = root.Get("marks").Bool()
		f.Wake = int(root.Get("wake").Int())
	}
	return ""
}

// DecodeRequest parses one host → runner line. The runner is Python, so Go
// only needs this for tests and fakes.
func DecodeRequest(line []byte) (Request, error) {
	if !gjson.ValidBytes(line) {
		return Request{}, badLine(line, "not valid JSON")
	}
	root := gjson.ParseBytes(line)
	switch t := root.Get("type").String(); t {
	case "exit":
		return Request{Exit: true}, nil
	case "", "execute":
	default:
		return Request{}, badLine(line, fmt.Sprintf("unknown request type %q", t))
	}
	r := Request{ID: root.Get("id").String(), Code: root.Get("code").String(),
		Cwd: root.Get("cwd").String(), Run: root.Get("run").String()}
	if r.ID == "" {
		return Request{}, badLine(line, `execute request without "id"`)
	}
	if env := root.Get("env"); env.IsObject() {
		r.Env = map[string]*string{}
		env.ForEach(func(k, v gjson.Result) bool {
			if v.Type == gjson.Null {
				r.Env[k.Str] = nil
			} else {
				s := v.String()
				r.Env[k.Str] = &s
			}
			return true
		})
	}
	return r, nil
}
