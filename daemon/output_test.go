package daemon

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// An eval's "output" field is checked whole; a bad one is refused with
// what to send instead.
func TestParseOutput(t *testing.T) {
	tests := []struct {
		name, line string
		want       Output
		ok         bool
		err        string
	}{
		{"absent", `{"op":"eval"}`, Output{}, false, ""},
		{"passthrough", `{"output":{"noSpill":true,"passthrough":true}}`, Output{NoSpill: true, Passthrough: true}, true, ""},
		{"bounded", `{"output":{"maxBytes":2000}}`, Output{MaxBytes: 2000}, true, ""},
		{"not an object", `{"output":true}`, Output{}, false, `"output" must be an object`},
		{"negative", `{"output":{"maxBytes":-1}}`, Output{}, false, `"output.maxBytes" must be a whole number`},
		{"fraction", `{"output":{"maxBytes":1.5}}`, Output{}, false, `"output.maxBytes" must be a whole number`},
		{"too big", `{"output":{"maxBytes":1e12}}`, Output{}, false, `"output.maxBytes" must be a whole number`},
		{"not a bool", `{"output":{"passthrough":"yes"}}`, Output{}, false, `"output.passthrough" must be true or false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := parseOutput([]byte(tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || ok != tc.ok || got != tc.want {
				t.Fatalf("got %+v %v %v, want %+v %v", got, ok, err, tc.want, tc.ok)
			}
		})
	}
}

// A bytes line carries any bytes, and any request id, unchanged.
func TestBytesLineRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	tests := []struct {
		name  string
		id    string
		cell  int
		t     frames.Type
		data  []byte
		frame bool
	}{
		{"every byte", "run", 0, frames.TypeStdout, all, false},
		{"empty", "x", 3, frames.TypeStderr, nil, true},
		{"id to escape", "a\"b\\c\n\xff", 12, frames.TypeStdout, []byte("\x1b[31mred\r\n"), true},
	}
	var buf []byte
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := appendBytes(nil, tc.id, tc.cell, tc.t, tc.data, tc.frame)
			if !json.Valid(line) || line[len(line)-1] != '\n' || bytes.Count(line, []byte("\n")) != 1 {
				t.Fatalf("not one JSON line: %q", line)
			}
			var b Bytes
			b, buf, _ = ParseBytes(line[:len(line)-1], buf)
			want := strings.ToValidUTF8(tc.id, "\uFFFD")
			if b.ID != want || b.Cell != tc.cell || b.Stream != streamName(tc.t) || b.Frame != tc.frame || !bytes.Equal(b.Data, tc.data) {
				t.Fatalf("got %+v from %q", b, line)
			}
		})
	}
	if _, _, err := ParseBytes([]byte(`{"type":"bytes","data":"no base64!"}`), nil); err == nil || !strings.Contains(err.Error(), "not base64") {
		t.Errorf("bad base64: %v", err)
	}
	if _, _, err := ParseBytes([]byte(`{"type":"bytes"}`), nil); err == nil || !strings.Contains(err.Error(), `without base64 "data" last`) {
		t.Errorf("no data: %v", err)
	}
}

func FuzzParseBytes(f *testing.F) {
	f.Add([]byte(`{"type":"bytes","id":"run","cell":0,"stream":"stdout","data":"aGk="}`))
	f.Add([]byte(`{"type":"bytes","data":"\u0041"}`))
	f.Add([]byte(`{"type":"bytes","id":"a\",\"data\":\"","data":""}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		b, _, err := ParseBytes(line, nil)
		if err != nil {
			return
		}
		line = appendBytes(nil, b.ID, b.Cell, map[string]frames.Type{"stderr": frames.TypeStderr}[b.Stream], b.Data, b.Frame)
		again, _, err := ParseBytes(line[:len(line)-1], nil)
		if err != nil || !bytes.Equal(again.Data, b.Data) {
			t.Fatalf("round trip of %q: %v %q", line, err, again.Data)
		}
	})
}
