package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/serve"
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

// A bytes line carries any bytes, however many, and any request id,
// unchanged: the process writes the bytes after the line that counts
// them (serve.Encoder.RawData), and Next reads them with it, the lines
// around them whole. A line without its size ends the reading.
func TestBytesLineRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte(passthroughMarker+"\n"), 40000) // past any one read and the reader's buffer
	tests := []struct {
		name  string
		id    string
		cell  int
		t     frames.Type
		data  []byte
		frame bool
	}{
		{"every byte", "run", 0, frames.TypeStdout, allBytes(), false},
		{"empty", "x", 3, frames.TypeStderr, nil, true},
		{"id to escape", "a\"b\\c\n\xff", 12, frames.TypeStdout, []byte("\x1b[31mred\r\n"), true},
		{"a line inside", "run", 1, frames.TypeStderr, []byte("\n" + `{"type":"end"}` + "\n"), false},
		{"big", "run", 2, frames.TypeStdout, big, false},
	}
	between := `{"cell":0,"type":"display","id":"run"}`
	paths := fakeProcess(t, func(nc net.Conn, done <-chan struct{}) {
		enc := serve.NewEncoder(nc)
		for _, tc := range tests {
			enc.RawData(appendBytes(nil, tc.id, tc.cell, tc.t, len(tc.data), tc.frame), tc.data)
			enc.Raw([]byte(between + "\n"))
		}
		enc.Raw([]byte(`{"type":"bytes","id":"run","cell":0,"stream":"stdout"}` + "\n"))
		<-done
	})
	c := dialShort(t, paths)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, err := c.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(line) || gjson.GetBytes(line, "type").String() != TypeBytes {
				t.Fatalf("Next returned %q, want the bytes line", line)
			}
			b := c.Bytes()
			want := strings.ToValidUTF8(tc.id, "\uFFFD")
			if b.ID != want || b.Cell != tc.cell || b.Stream != streamName(tc.t) || b.Frame != tc.frame || !bytes.Equal(b.Data, tc.data) {
				t.Fatalf("got %+v from %q, want %q", b, line, tc.data)
			}
			if line, err := c.Next(); err != nil || string(line) != between {
				t.Fatalf("then %q %v, want the line after the bytes", line, err)
			}
		})
	}
	if _, err := c.Next(); !errors.Is(err, ErrBadLine) || !strings.Contains(err.Error(), `without a "size"`) {
		t.Errorf("a bytes line without its size: %v", err)
	}
}

// A bytes line's size is a claim: what is held grows with the bytes that
// came, so a line that says 200 MiB and ends after a few costs a few.
func TestBytesClaimIsNotAllocatedAhead(t *testing.T) {
	const claimed = 200 << 20
	paths := fakeProcess(t, func(nc net.Conn, done <-chan struct{}) {
		serve.NewEncoder(nc).RawData(appendBytes(nil, "run", 0, frames.TypeStdout, claimed, false), []byte("only this"))
		nc.Close() // the process ended part way
	})
	c := dialShort(t, paths)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Next()
	runtime.ReadMemStats(&after)
	var ended *EndedError
	if !errors.As(err, &ended) {
		t.Fatalf("Next: %v, want an *EndedError for bytes cut short", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("reading a cut-short claim of %d bytes allocated %d", claimed, got)
	}
}

func FuzzParseBytes(f *testing.F) {
	f.Add([]byte(`{"type":"bytes","id":"run","cell":0,"stream":"stdout","size":2}`))
	f.Add([]byte(`{"type":"bytes","size":1e3}`))
	f.Add([]byte(`{"type":"bytes","id":"a\",\"size\":\"","size":0}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		b, err := ParseBytes(line)
		if err != nil {
			return
		}
		line = appendBytes(nil, b.ID, b.Cell, map[string]frames.Type{"stderr": frames.TypeStderr}[b.Stream], b.Size, b.Frame)
		again, err := ParseBytes(line[:len(line)-1])
		if err != nil || again.Size != b.Size || again.Cell != b.Cell || again.Frame != b.Frame || (utf8.ValidString(b.ID) && again.ID != b.ID) {
			t.Fatalf("round trip of %q: %v %+v", line, err, again)
		}
	})
}

// passthroughMarker is what the wire test's cell writes: bytes no JSON
// string holds as they are (invalid UTF-8, NUL, control bytes) and a
// newline, quote and a line of the protocol's own inside them.
const passthroughMarker = "\xff\xfe\x00 \"{\\\"type\\\":\\\"end\\\"}\"\n\x1b[31m\r\xc3("

// Passthrough output crosses the socket as it is, after the bytes line
// that counts it, not encoded in the line: base64 made `run --session`'s
// bulk output three times as slow as a one-shot run's.
func TestBytesCrossTheSocketAsTheyAre(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	addr, release, err := socketAddr(paths.Socket)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("unix", addr)
	release()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	marker := passthroughMarker + string(allBytes())
	code := fmt.Sprintf("import sys\nsys.stdout.buffer.write(%s)\nsys.stdout.flush()", pyBytes(marker))
	line, _ := json.Marshal(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": t.TempDir(),
		"python": testkit.Python(t), "output": map[string]bool{"passthrough": true},
		"cells": []map[string]string{{"language": "py", "code": code}}})
	if _, err := nc.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	var wire []byte
	buf := make([]byte, 64<<10)
	for !bytes.HasSuffix(wire, []byte(`"type":"end"}`+"\n")) {
		n, err := nc.Read(buf)
		wire = append(wire, buf[:n]...)
		if err != nil {
			t.Fatalf("%v after %q", err, wire)
		}
	}
	head := fmt.Sprintf(`{"type":"bytes","id":"run","cell":0,"stream":"stdout","size":%d}`+"\n", len(marker))
	if !bytes.Contains(wire, []byte(head+marker)) {
		t.Fatalf("the socket carried\n%q\nwant the cell's bytes as they are after %q", wire, head)
	}
}

// A passthrough request's stdout and stderr come whole, every byte as
// the cell wrote it, in order with each other and with its other frames,
// however many reads of the interpreter's pipes they take.
func TestPassthroughKeepsEveryByteInOrder(t *testing.T) {
	paths, _ := serveHome(t, time.Hour)
	const code = `import sys
chunk = bytes(range(256)) * 1200 + b'\xff\xfe\x00{"type":"end"}\n\xc3('
for i in range(3):
    sys.stdout.buffer.write(b'out%d' % i + chunk)
    sys.stdout.flush()
    display('shown %d' % i)
    sys.stderr.buffer.write(b'err%d' % i + chunk)
    sys.stderr.flush()
    display('after %d' % i)`
	c := dialed(t, paths)
	c.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": t.TempDir(),
		"python": testkit.Python(t), "output": map[string]bool{"passthrough": true, "noSpill": true},
		"cells": []map[string]string{{"language": "py", "code": code}}})
	var got []string // each stream's run of bytes, each display
	for {
		line, err := c.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch gjson.GetBytes(line, "type").String() {
		case TypeBytes:
			b := c.Bytes()
			if n := len(got); n > 0 && strings.HasPrefix(got[n-1], b.Stream+":") {
				got[n-1] += string(b.Data)
			} else {
				got = append(got, b.Stream+":"+string(b.Data))
			}
		case "display":
			got = append(got, gjson.GetBytes(line, "bundle.text/plain").String())
		case "stdout", "stderr":
			t.Fatalf("a passthrough request got a %s frame: %s", gjson.GetBytes(line, "type"), line)
		case "end":
			chunk := strings.Repeat(string(allBytes()), 1200) + "\xff\xfe\x00{\"type\":\"end\"}\n\xc3("
			var want []string
			for i := range 3 {
				want = append(want, fmt.Sprintf("stdout:out%d%s", i, chunk), fmt.Sprintf("'shown %d'", i),
					fmt.Sprintf("stderr:err%d%s", i, chunk), fmt.Sprintf("'after %d'", i))
			}
			if len(got) != len(want) {
				t.Fatalf("got %d runs of output, want %d: %.300q", len(got), len(want), got)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("run %d: got %d bytes %.200q, want %d bytes %.200q", i, len(got[i]), got[i], len(want[i]), want[i])
				}
			}
			return
		case "request_error":
			t.Fatalf("refused: %s", line)
		}
	}
}

// allBytes is every byte value once.
func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// pyBytes is s as a Python bytes literal.
func pyBytes(s string) string {
	var b strings.Builder
	b.WriteString(`b"`)
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02x`, s[i])
	}
	b.WriteString(`"`)
	return b.String()
}

// A line from the process is held as it comes up to the longest line the
// protocol has (MaxLine, less in the test): one past it is a bad line,
// refused once it passes the bound, not read on until the process stops
// (a runaway writer grew the client without end).
func TestNextRefusesALineTooLong(t *testing.T) {
	const max = 64 << 10
	tests := []struct {
		name string
		size int
		ok   bool
	}{
		{"at the bound", max, true},
		{"past it", 4 * max, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			paths := fakeProcess(t, func(nc net.Conn, done <-chan struct{}) {
				line := `{"type":"stdout","data":"` + strings.Repeat("x", tc.size-len(`{"type":"stdout","data":""}`)) + `"}` + "\n"
				nc.Write([]byte(line))
				// A runaway: more of one line for as long as it is read.
				for chunk := bytes.Repeat([]byte("y"), 1<<20); ; {
					if _, err := nc.Write(chunk); err != nil {
						return
					}
					select {
					case <-done:
						return
					default:
					}
				}
			})
			c := dialShort(t, paths)
			c.max = max
			line, err := c.Next()
			if tc.ok {
				if err != nil || len(line) != tc.size {
					t.Fatalf("Next: %d bytes, %v; want the %d-byte line", len(line), err, tc.size)
				}
				line, err = c.Next() // the runaway
			}
			if !errors.Is(err, ErrBadLine) || !strings.Contains(err.Error(), "longer than") {
				t.Fatalf("Next: %d bytes, %v; want ErrBadLine saying the line is too long", len(line), err)
			}
		})
	}
}
