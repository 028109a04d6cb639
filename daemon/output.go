package daemon

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// TypeBytes is the line that carries a cell's stdout or stderr bytes
// unchanged, to a client whose eval asked for "output": {"passthrough":
// true}. Its last field, "size", counts the bytes, which follow the
// line's newline on the wire as they are, the one place the stream is not
// lines: JSON text cannot hold invalid UTF-8 or every control byte, and
// base64 in the line (as they went first) made `run --session` of bulk
// output three times as slow as a one-shot run, encoded, decoded and
// copied line by line. [Client.Next] reads the bytes with their line.
const TypeBytes = "bytes"

// Bytes is a TypeBytes line. Frame says the bytes came as a stdout or
// stderr frame (evalhost's own "[...]" notices come so, as do the
// cells of interpreters that cannot lend their bytes); without it they
// are the bytes a Python cell wrote, lent as they came
// (sessions.Request.Streams). A one-shot run shows the two the same way
// but for notices, which it remembers so the cell's end does not repeat
// them.
type Bytes struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Cell   int    `json:"cell"`
	Stream string `json:"stream"` // "stdout" or "stderr"
	Frame  bool   `json:"frame,omitempty"`
	Size   int    `json:"size"` // how many bytes follow the line
	Data   []byte `json:"-"`    // those bytes, once read ([Client.Bytes])
}

// maxBytesSize bounds a bytes line's "size": what a client holds at once.
// The process sends a read of the interpreter's pipes (256 KiB) or one
// frame's text per line, far less.
const maxBytesSize = MaxLine

// appendBytes appends the TypeBytes line (with its newline) that goes
// before n bytes of stream t, built by hand, as serve's lines are.
func appendBytes(dst []byte, id string, cell int, t frames.Type, n int, frame bool) []byte {
	quoted, _ := json.Marshal(id) // a string always encodes
	dst = append(append(append(dst, `{"type":"`+TypeBytes+`","id":`...), quoted...), `,"cell":`...)
	dst = strconv.AppendInt(dst, int64(cell), 10)
	dst = append(append(append(dst, `,"stream":"`...), streamName(t)...), '"')
	if frame {
		dst = append(dst, `,"frame":true`...)
	}
	dst = strconv.AppendInt(append(dst, `,"size":`...), int64(n), 10)
	return append(dst, "}\n"...)
}

// ParseBytes reads a TypeBytes line, without its newline; Data is left
// for the caller to read: Size bytes after the line.
func ParseBytes(line []byte) (Bytes, error) {
	if !json.Valid(line) {
		return Bytes{}, fmt.Errorf("a line that is not JSON: %.200q", line)
	}
	head := gjson.ParseBytes(line)
	b := Bytes{Type: head.Get("type").String(), ID: head.Get("id").String(), Cell: int(head.Get("cell").Int()),
		Stream: head.Get("stream").String(), Frame: head.Get("frame").Bool()}
	if b.Type != TypeBytes {
		return Bytes{}, fmt.Errorf("not a bytes line: %.200s", line)
	}
	size := head.Get("size")
	if size.Type != gjson.Number || size.Num != float64(int(size.Num)) || size.Num < 0 || size.Num > maxBytesSize {
		return Bytes{}, fmt.Errorf("a bytes line without a \"size\" from 0 to %d: %.200s", maxBytesSize, line)
	}
	b.Size = int(size.Num)
	return b, nil
}

// Output is an eval's "output" field: how the request's cells' output is
// bounded and carried, as a one-shot run sets its own registry's sink.
// Without the field the process's own bounds apply (Config.Sessions.Sink).
type Output struct {
	// MaxBytes bounds each cell's kept tail (the cell_end's output);
	// 0 is the sink's default.
	MaxBytes int
	// NoSpill keeps output that passes the tail out of an artifact: the
	// client shows every byte.
	NoSpill bool
	// Passthrough sends stdout and stderr as TypeBytes lines, the cell's
	// own bytes unsanitised, in place of stdout and stderr frames.
	Passthrough bool
}

// maxOutputBytes bounds "maxBytes": a tail is held in memory per cell.
const maxOutputBytes = 1 << 30

// parseOutput reads an eval's "output" field; ok is false without one.
func parseOutput(line []byte) (o Output, ok bool, err error) {
	v := gjson.GetBytes(line, "output")
	if !v.Exists() {
		return o, false, nil
	}
	if !v.IsObject() {
		return o, false, fmt.Errorf(`"output" must be an object like {"maxBytes": 2000, "noSpill": false, "passthrough": false}`)
	}
	if n := v.Get("maxBytes"); n.Exists() {
		if n.Type != gjson.Number || n.Num != float64(int(n.Num)) || n.Num < 0 || n.Num > maxOutputBytes {
			return o, false, fmt.Errorf(`"output.maxBytes" must be a whole number of bytes from 0 (the default) to %d`, maxOutputBytes)
		}
		o.MaxBytes = int(n.Num)
	}
	for _, f := range []struct {
		name string
		to   *bool
	}{{"noSpill", &o.NoSpill}, {"passthrough", &o.Passthrough}} {
		if b := f.to; v.Get(f.name).Exists() {
			if !v.Get(f.name).IsBool() {
				return o, false, fmt.Errorf(`"output.%s" must be true or false`, f.name)
			}
			*b = v.Get(f.name).Bool()
		}
	}
	return o, true, nil
}

// sink is the request's sink: the process's store, the client's bounds.
func (o Output) sink(base streamsink.Options) *streamsink.Options {
	base.MaxBytes, base.NoSpill, base.Passthrough = o.MaxBytes, o.NoSpill, o.Passthrough
	return &base
}

// streamName is the stream a frame type names on a TypeBytes line.
func streamName(t frames.Type) string {
	if t == frames.TypeStderr {
		return "stderr"
	}
	return "stdout"
}
