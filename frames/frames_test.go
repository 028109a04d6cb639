package frames

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRoundTrip(t *testing.T) {
	pngBundle := Bundle{"text/plain": json.RawMessage(`"<img>"`), "image/png": json.RawMessage(`"iVBORw0K"`),
		"application/json": json.RawMessage(`{"a":[1,2.50,null]}`)}
	tests := []struct {
		name  string
		frame Frame
	}{
		{"ready", Frame{Type: TypeReady, Runner: "1.0", Python: "3.11.7", PID: 42, Executable: "/usr/bin/python3"}},
		{"interrupted", Frame{Type: TypeInterrupted, ID: "c1"}},
		{"ready with marks", Frame{Type: TypeReady, Runner: "1.0", Python: "3.11.7", PID: 42, Executable: "/usr/bin/python3", Marks: true, Wake: 40}},
		{"started", Frame{Type: TypeStarted, ID: "c1"}},
		{"stdout", Frame{Type: TypeStdout, ID: "c1", Data: "hi\n\t\"quoted\" <tag> & é 日本\u2028"}},
		{"stderr control bytes", Frame{Type: TypeStderr, ID: "c1", Data: "\x00\x1b[31mred\r\n"}},
		{"display", Frame{Type: TypeDisplay, ID: "c1", Bundle: pngBundle, Metadata: json.RawMessage(`{"image/png":{"width":3}}`), DisplayID: "d1"}},
		{"update_display", Frame{Type: TypeUpdateDisplay, ID: "c2", Bundle: Bundle{"text/plain": json.RawMessage(`"x"`)}, DisplayID: "d1"}},
		{"clear_output", Frame{Type: TypeClearOutput, ID: "c1", Wait: true}},
		{"result", Frame{Type: TypeResult, ID: "c1", Bundle: Bundle{"text/plain": json.RawMessage(`"42"`)}, ExecutionCount: 7}},
		{"error", Frame{Type: TypeError, ID: "c1", Ename: "NameError", Evalue: "name 'x' is not defined", Traceback: []string{"Traceback:", "  x"}}},
		{"input", Frame{Type: TypeInput, ID: "c1", Prompt: "name? "}},
		{"warning", Frame{Type: TypeWarning, Message: "module m raised"}},
		{"done", Frame{Type: TypeDone, ID: "c1", Status: StatusError, ExecutionCount: 3, Cancelled: true}},
		{"done by sys.exit", Frame{Type: TypeDone, ID: "c1", Status: StatusOK, ExecutionCount: 2, Exit: true}},
		{"error of sys.exit(3)", Frame{Type: TypeError, ID: "c1", Ename: "SystemExit", Evalue: "3", Traceback: []string{"SystemExit: 3"}, Exit: true}},
		{"error a user's excepthook reported", Frame{Type: TypeError, ID: "c1", Ename: "ValueError", Evalue: "x", Traceback: []string{"ValueError: x"}, Reported: true}},
		{"done by sys.exit(3)", Frame{Type: TypeDone, ID: "c1", Status: StatusError, ExecutionCount: 2, Exit: true, ExitStatus: 3}},
		{"done by sys.exit(text)", Frame{Type: TypeDone, ID: "c1", Status: StatusError, Exit: true, ExitStatus: 1,
			ExitMessage: "bad \"input\"\n", ExitPrints: true}},
		{"done by sys.exit('')", Frame{Type: TypeDone, ID: "c1", Status: StatusError, Exit: true, ExitStatus: 1, ExitPrints: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := AppendJSON(nil, &tt.frame)
			if !json.Valid(line) {
				t.Fatalf("encoded frame is not valid JSON: %s", line)
			}
			got, err := Decode(line)
			if err != nil {
				t.Fatalf("Decode(%s): %v", line, err)
			}
			if !reflect.DeepEqual(got, tt.frame) {
				t.Fatalf("round trip changed the frame\n got %#v\nwant %#v", got, tt.frame)
			}
		})
	}
}

// marshalNoHTML is encoding/json's encoding of s with HTML escaping off.
func marshalNoHTML(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// The hand-written string encoder must agree with encoding/json (HTML
// escaping off), which every client decodes with.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x01\x1f\x7f", "<>&", "é日本🙂", "\u2028\u2029", "bad\xff\xfeutf8", "\xe6\x97",
		"exactly8", "sixteen bytes ok", "seven b\"quote at 7", "0123456\\", "0123456\x1f", "0123456é", "long run of plain text then\ta tab", "\b\f", "0123456\f89"} {
		want := marshalNoHTML(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain text\n")
	f.Add("0123456\"89abcdef\\\x7f\x80\xff<>&\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), marshalNoHTML(s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	})
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name, line, reason string
	}{
		{"not json", `{"type":"stdout",`, "not valid JSON"},
		{"array", `[1,2]`, "not a JSON object"},
		{"no type", `{"id":"c1"}`, `missing "type"`},
		{"unknown type", `{"type":"bogus","id":"c1"}`, "unknown frame type"},
		{"stdout without id", `{"type":"stdout","data":"x"}`, `without "id"`},
		{"stdout without data", `{"type":"stdout","id":"c1"}`, `missing string "data"`},
		{"display without bundle", `{"type":"display","id":"c1"}`, `missing object "bundle"`},
		{"update without display id", `{"type":"update_display","id":"c1","bundle":{}}`, "displayId"},
		{"done with bad status", `{"type":"done","id":"c1","status":"maybe"}`, "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.line))
			var pe *ProtocolError
			if !errors.As(err, &pe) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode(%s) = %v, want a *ProtocolError", tt.line, err)
			}
			if !strings.Contains(pe.Reason, tt.reason) || pe.Line != tt.line {
				t.Fatalf("error %q does not name %q and quote the line", err, tt.reason)
			}
		})
	}
}

func TestReaderReadsOnAfterBadLines(t *testing.T) {
	long := `{"type":"stdout","id":"c1","data":"` + strings.Repeat("x", 300) + `"}`
	input := strings.Join([]string{
		`{"type":"started","id":"c1"}`,
		`garbage`,
		long,
		``,
		`{"type":"done","id":"c1","status":"ok","executionCount":1,"cancelled":false}`,
		`{"type":"stdout","id":"c2","data":"no newline at end"}`,
	}, "\n")
	r := NewReader(strings.NewReader(input), 128)
	var types []string
	var bad []*ProtocolError
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *ProtocolError
		if errors.As(err, &pe) {
			bad = append(bad, pe)
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		types = append(types, f.Type.String())
	}
	if want := []string{"started", "done", "stdout"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("frames read = %v, want %v", types, want)
	}
	if len(bad) != 2 || !strings.Contains(bad[1].Reason, "longer than 128") || len(bad[1].Line) > quoteLimit {
		t.Fatalf("bad lines = %+v, want garbage then an over-long line quoted to %d bytes", bad, quoteLimit)
	}
}

func TestRequestRoundTrip(t *testing.T) {
	v := "1"
	tests := []Request{
		{Exit: true},
		{ID: "c1", Code: "print('hi')\n"},
		{ID: "c2", Code: "x", Cwd: "/tmp", Run: "r9", Env: map[string]*string{"A": &v, "B": nil}},
		{ID: "c3", Code: "x", Argv: []string{"/w/a b.py", "--n", "\x1b\n"}, File: "/w/a b.py"},
		{ID: "c4", Code: "x", Argv: []string{"-c"}},
		{ID: "c5", Code: "x", Filename: "/w/a \"b\".py", FirstLine: 12},
		{ID: "c6", Code: "x", Filename: "/w/a.py"},
		{ID: "c7", Code: "x", Argv: []string{"-m", "--n"}, Module: "json.tool"},
		{ID: "c8", Code: "main()", Filename: "/w/a.py", Script: true},
		{ID: "c9", Code: "x", InScript: true},
		{ID: "c10", Code: "x", InScript: true, Last: true},
		{ID: "c11", Code: "x", InScript: true, ExitReports: true},
		{ID: "c12", Code: "x", Terminal: &Terminal{Fds: []int{1, 2}, Env: map[string]*string{"COLUMNS": &v, "NO_COLOR": nil}}},
		{ID: "c13", Code: "x", Terminal: &Terminal{Fds: []int{2}}},
		{ID: "c14", Code: "x", Terminal: &Terminal{Fds: []int{}, Request: "0123abcd"}},
	}
	for _, want := range tests {
		line := AppendRequest(nil, &want)
		got, err := DecodeRequest(line)
		if err != nil {
			t.Fatalf("DecodeRequest(%s): %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("request round trip\n got %#v\nwant %#v", got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"type":"stdout","id":"a","data":"x"}`, `{"type":"display","id":"a","bundle":{"text/plain":"x"}}`,
		`{"type":"done","id":"a","status":"ok"}`, `{"type":"error","id":"a","traceback":["x",1]}`, `[]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fr, err := Decode(line)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) || len(pe.Line) > quoteLimit {
				t.Fatalf("Decode error %v is not a bounded *ProtocolError", err)
			}
			return
		}
		out := AppendJSON(nil, &fr)
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("re-encoding a decoded frame gave invalid JSON: %s", out)
		}
		again, err := Decode(out)
		if err != nil || again.Type != fr.Type || again.ID != fr.ID {
			t.Fatalf("re-decoding %s: %v (%v)", out, err, again)
		}
	})
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"type\":\"started\",\"id\":\"a\"}\nbad\n"), 16)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			max = 64
		}
		r := NewReader(bytes.NewReader(data), max)
		for i := 0; i <= len(data)+1; i++ {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Next: unexpected error %v", err)
			}
		}
		t.Fatalf("reader did not reach EOF within %d calls", len(data)+2)
	})
}

func BenchmarkAppendJSONStdout(b *testing.B) {
	f := Frame{Type: TypeStdout, ID: "c1", Data: strings.Repeat("line of output 12345\n", 3000)}
	buf := make([]byte, 0, 128<<10)
	b.SetBytes(int64(len(f.Data)))
	for b.Loop() {
		buf = AppendJSON(buf[:0], &f)
	}
}

func BenchmarkAppendJSONLongLines(b *testing.B) {
	f := Frame{Type: TypeStdout, ID: "c1", Data: strings.Repeat("x", 65535) + "\n"}
	buf := make([]byte, 0, 128<<10)
	b.SetBytes(int64(len(f.Data)))
	for b.Loop() {
		buf = AppendJSON(buf[:0], &f)
	}
}

func BenchmarkMarshalStdoutEncodingJSON(b *testing.B) {
	type wire struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Data string `json:"data"`
	}
	w := wire{"stdout", "c1", strings.Repeat("line of output 12345\n", 3000)}
	b.SetBytes(int64(len(w.Data)))
	for b.Loop() {
		_, _ = json.Marshal(&w)
	}
}

// BenchmarkDecodeWarmCell decodes the three frames of a warm 1+1 cell.
func BenchmarkDecodeWarmCell(b *testing.B) {
	lines := [][]byte{
		[]byte(`{"type":"started","id":"b-0-a22a1234567890abcdef"}`),
		[]byte(`{"type":"result","id":"b-0-a22a1234567890abcdef","bundle":{"text/plain":"2"},"executionCount":2,"pos":1,"unmarked":3}`),
		[]byte(`{"type":"done","id":"b-0-a22a1234567890abcdef","status":"ok","executionCount":2,"cancelled":false,"unmarked":3}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if _, err := Decode(l); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// A repeated member: the first one counts, as gjson's Get reads it.
func TestDecodeFirstOfRepeatedMember(t *testing.T) {
	f, err := Decode([]byte(`{"type":"done","id":"a","status":"ok","status":"maybe","id":"b","executionCount":3}`))
	if err != nil || f.ID != "a" || f.Status != "ok" || f.ExecutionCount != 3 {
		t.Fatalf("Decode = %+v, %v; want id a, status ok, executionCount 3", f, err)
	}
}

// Bundle.Text reads any raw value as json.Unmarshal reads it into a string,
// its shortcut for plain strings included.
func FuzzBundleText(f *testing.F) {
	for _, s := range []string{`"2"`, `"a\"b"`, `"\u00e9"`, `"é"`, "\"\xff\"", "\"a\tb\"", `"a"b"`, `"abc`, `"`, `""`, `3`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := Bundle{"text/plain": raw}.Text("text/plain")
		var want string
		wantOK := len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &want) == nil
		if ok != wantOK || got != want {
			t.Fatalf("Text(%q) = %q, %v; json.Unmarshal gives %q, %v", raw, got, ok, want, wantOK)
		}
	})
}

// Bytes from the OS reach Python as os.fsdecode gives them: each byte of
// invalid UTF-8 is a lone surrogate, \udcXX, which json.loads keeps.
func TestAppendFSString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "a b.py", `"a b.py"`},
		{"valid UTF-8 kept", "é\u2028", `"é\u2028"`},
		{"a lone byte", "a\xffb", `"a\udcffb"`},
		{"a cut sequence, byte by byte", "\xe2\x82", `"\udce2\udc82"`},
		{"an encoded surrogate", "\xed\xa0\x80", `"\udced\udca0\udc80"`},
		{"escapes still escaped", "\"\\\n", `"\"\\\n"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendFSString(nil, tt.in)); got != tt.want {
				t.Errorf("AppendFSString(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	line := AppendRequest(nil, &Request{ID: "a", Argv: []string{"s\xff.py", "\xfe"}, File: "/w/s\xff.py"})
	if want := `"argv":["s\udcff.py","\udcfe"],"file":"/w/s\udcff.py"`; !strings.Contains(string(line), want) || !json.Valid(line) {
		t.Errorf("request %s lacks %s", line, want)
	}
}

// An error frame's keyboardInterrupt is read (the registry's), and left
// out of what encoders write: a client has the ename.
func TestKeyboardInterruptDecodedNotEncoded(t *testing.T) {
	line := []byte(`{"type":"error","id":"c1","ename":"KeyboardInterrupt","evalue":"","traceback":[],"keyboardInterrupt":true}`)
	f, err := Decode(line)
	if err != nil || !f.KeyboardInterrupt {
		t.Fatalf("Decode: %+v, %v; want KeyboardInterrupt set", f, err)
	}
	if out := AppendJSON(nil, &f); bytes.Contains(out, []byte("keyboardInterrupt")) {
		t.Errorf("encoded %s", out)
	}
}
