package frames

import (
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/jsonscan"
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

// The top-level members Decode reads, by their index in members.
const (
	mType = iota
	mID
	mPos
	mUnmarked
	mData
	mBundle
	mMetadata
	mDisplayID
	mExecutionCount
	mWait
	mEname
	mEvalue
	mTraceback
	mPrompt
	mMessage
	mStatus
	mCancelled
	mExit
	mExitStatus
	mExitMessage
	mReported
	mKeyboardInterrupt
	mRunner
	mPython
	mPID
	mExecutable
	mMarks
	mWake
	nMembers
)

// members are a frame line's top-level members, found in the one pass that
// checks the line (jsonscan): a gjson Get per member scanned the line from
// its start each time (eight scans of a result frame, most of the host's
// decoding of a warm 1+1), and gjson's Valid and ForEach were two passes.
// The first of a repeated key wins, as it does for Get.
type members [nMembers]gjson.Result

func memberIndex(key string) int {
	switch key {
	case "type":
		return mType
	case "id":
		return mID
	case "pos":
		return mPos
	case "unmarked":
		return mUnmarked
	case "data":
		return mData
	case "bundle":
		return mBundle
	case "metadata":
		return mMetadata
	case "displayId":
		return mDisplayID
	case "executionCount":
		return mExecutionCount
	case "wait":
		return mWait
	case "ename":
		return mEname
	case "evalue":
		return mEvalue
	case "traceback":
		return mTraceback
	case "prompt":
		return mPrompt
	case "message":
		return mMessage
	case "status":
		return mStatus
	case "cancelled":
		return mCancelled
	case "exit":
		return mExit
	case "exitStatus":
		return mExitStatus
	case "exitMessage":
		return mExitMessage
	case "reported":
		return mReported
	case "keyboardInterrupt":
		return mKeyboardInterrupt
	case "runner":
		return mRunner
	case "python":
		return mPython
	case "pid":
		return mPID
	case "executable":
		return mExecutable
	case "marks":
		return mMarks
	case "wake":
		return mWake
	}
	return -1
}

func (m *members) set(key string, v gjson.Result) {
	if i := memberIndex(key); i >= 0 && !m[i].Exists() {
		m[i] = v
	}
}

// Decode parses one frame line (without its newline).
func Decode(line []byte) (Frame, error) {
	var m members
	if !jsonscan.Object(string(line), m.set) {
		if !gjson.ValidBytes(line) {
			return Frame{}, badLine(line, "not valid JSON")
		}
		return Frame{}, badLine(line, "not a JSON object")
	}
	typ := m[mType]
	if typ.Type != gjson.String {
		return Frame{}, badLine(line, `missing "type"`)
	}
	f := Frame{Type: ParseType(typ.Str)}
	if f.Type == TypeUnknown {
		return Frame{}, badLine(line, fmt.Sprintf("unknown frame type %q", typ.Str))
	}
	id := m[mID]
	if id.Exists() && id.Type != gjson.String {
		return Frame{}, badLine(line, `"id" is not a string`)
	}
	f.ID = id.Str
	if f.ID == "" && needsID(f.Type) {
		return Frame{}, badLine(line, fmt.Sprintf(`%s frame without "id"`, f.Type))
	}
	if err := decodeBody(&f, &m); err != "" {
		return Frame{}, badLine(line, err)
	}
	return f, nil
}

// readOnly views s as a raw JSON value without copying it. Its capacity is
// its length, so append copies; nothing may write into it.
func readOnly(s string) json.RawMessage {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func needsID(t Type) bool { return t != TypeReady && t != TypeWarning }

// decodeBody fills the type-specific fields; it returns a reason on failure.
func decodeBody(f *Frame, m *members) string {
	switch f.Type {
	case TypeDisplay, TypeUpdateDisplay, TypeClearOutput, TypeResult, TypeError, TypeInput, TypeSync, TypeDone:
		if p := m[mPos]; p.Exists() {
			f.Pos = int(p.Int())
		}
		if u := m[mUnmarked]; u.Exists() {
			f.Unmarked = uint8(u.Int() & 3)
		}
	}
	switch f.Type {
	case TypeStdout, TypeStderr:
		d := m[mData]
		if d.Type != gjson.String {
			return `missing string "data"`
		}
		f.Data = d.Str
	case TypeDisplay, TypeUpdateDisplay, TypeResult:
		b := m[mBundle]
		if !b.IsObject() {
			return `missing object "bundle"`
		}
		// The values share the copy of the line Decode scans, as the
		// frame's strings (its id) do: a copy each as well cost a large
		// display twice its size, and held no less while the frame lived.
		f.Bundle = make(Bundle)
		jsonscan.Object(b.Raw, func(k string, v gjson.Result) { f.Bundle[k] = readOnly(v.Raw) })
		if m := m[mMetadata]; m.IsObject() {
			f.Metadata = readOnly(m.Raw)
		}
		f.DisplayID = m[mDisplayID].String()
		if f.Type == TypeUpdateDisplay && f.DisplayID == "" {
			return `update_display without "displayId"`
		}
		f.ExecutionCount = int(m[mExecutionCount].Int())
	case TypeClearOutput:
		f.Wait = m[mWait].Bool()
	case TypeError:
		f.Ename = m[mEname].String()
		f.Evalue = m[mEvalue].String()
		m[mTraceback].ForEach(func(_, v gjson.Result) bool {
			f.Traceback = append(f.Traceback, v.String())
			return true
		})
		f.Exit = m[mExit].Bool()
		f.Reported = m[mReported].Bool()
		f.KeyboardInterrupt = m[mKeyboardInterrupt].Bool()
	case TypeInput:
		f.Prompt = m[mPrompt].String()
	case TypeWarning:
		f.Message = m[mMessage].String()
	case TypeDone:
		f.Status = m[mStatus].String()
		if f.Status != StatusOK && f.Status != StatusError {
			return fmt.Sprintf("done frame with status %q", f.Status)
		}
		f.ExecutionCount = int(m[mExecutionCount].Int())
		f.Cancelled = m[mCancelled].Bool()
		f.Exit = m[mExit].Bool()
		if f.Exit {
			f.ExitStatus = int(m[mExitStatus].Int())
			f.ExitMessage = m[mExitMessage].String()
			f.ExitPrints = m[mExitMessage].Exists()
		}
	case TypeReady:
		f.Runner = m[mRunner].String()
		f.Python = m[mPython].String()
		f.PID = int(m[mPID].Int())
		f.Executable = m[mExecutable].String()
		f.Marks = m[mMarks].Bool()
		f.Wake = int(m[mWake].Int())
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
		r.Env = decodeEnv(env)
	}
	if argv := root.Get("argv"); argv.IsArray() {
		r.Argv = []string{}
		argv.ForEach(func(_, v gjson.Result) bool {
			r.Argv = append(r.Argv, v.String())
			return true
		})
		r.File = root.Get("file").String()
	}
	if filename := root.Get("filename"); filename.Exists() {
		r.Filename, r.FirstLine = filename.String(), int(root.Get("line").Int())
	}
	r.Module = root.Get("module").String()
	r.Script = root.Get("script").Bool()
	r.InScript = root.Get("inScript").Bool()
	r.Last = root.Get("last").Bool()
	r.ExitReports = root.Get("exitReports").Bool()
	if t := root.Get("terminal"); t.IsObject() {
		r.Terminal = &Terminal{Fds: []int{}}
		t.Get("fds").ForEach(func(_, v gjson.Result) bool {
			r.Terminal.Fds = append(r.Terminal.Fds, int(v.Int()))
			return true
		})
		if env := t.Get("env"); env.IsObject() {
			r.Terminal.Env = decodeEnv(env)
		}
		r.Terminal.Request = t.Get("request").String()
	}
	return r, nil
}

// decodeEnv is an execute request's env object: a null value unsets.
func decodeEnv(env gjson.Result) map[string]*string {
	out := map[string]*string{}
	env.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.Null {
			out[k.Str] = nil
		} else {
			s := v.String()
			out[k.Str] = &s
		}
		return true
	})
	return out
}
