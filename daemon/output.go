package daemon

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// TypeBytes is the line that carries a cell's stdout or stderr bytes
// unchanged, to a client whose eval asked for "output": {"passthrough":
// true}: JSON text cannot hold invalid UTF-8 or every control byte, so
// the bytes go base64-encoded in Data.
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
	Data   []byte `json:"data"`
}

// appendBytes appends a TypeBytes line and its newline, built by hand:
// bulk output is most of what these lines carry, and encoding/json would
// scan every byte of it again.
func appendBytes(dst []byte, id string, cell int, t frames.Type, p []byte, frame bool) []byte {
	quoted, _ := json.Marshal(id) // a string always encodes
	dst = slices.Grow(dst, 80+len(quoted)+base64.StdEncoding.EncodedLen(len(p)))
	dst = append(append(append(dst, `{"type":"`+TypeBytes+`","id":`...), quoted...), `,"cell":`...)
	dst = strconv.AppendInt(dst, int64(cell), 10)
	dst = append(append(append(dst, `,"stream":"`...), streamName(t)...), '"')
	if frame {
		dst = append(dst, `,"frame":true`...)
	}
	dst = base64.StdEncoding.AppendEncode(append(dst, `,"data":"`...), p)
	return append(dst, "\"}\n"...)
}

// ParseBytes reads a TypeBytes line as appendBytes writes it, "data"
// last: it decodes the base64 into buf (grown as needed) and returns the
// line with Data in it. Only the fields before "data" are parsed as JSON
// (a string before it cannot hold `,"data":"`: its quote would be
// escaped), so bulk output is scanned once, by the decoder.
func ParseBytes(line, buf []byte) (Bytes, []byte, error) {
	const key = `,"data":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 || !bytes.HasSuffix(line, []byte(`"}`)) || len(line) < i+len(key)+2 {
		return Bytes{}, buf, fmt.Errorf("a bytes line without base64 \"data\" last: %.200s", line)
	}
	enc := line[i+len(key) : len(line)-2]
	size := base64.StdEncoding.DecodedLen(len(enc))
	buf = slices.Grow(buf[:0], size)[:size]
	n, err := base64.StdEncoding.Decode(buf, enc)
	if err != nil {
		return Bytes{}, buf, fmt.Errorf("a bytes line's \"data\" is not base64: %w", err)
	}
	head := gjson.Parse(string(line[:i]) + "}")
	b := Bytes{Type: head.Get("type").String(), ID: head.Get("id").String(), Cell: int(head.Get("cell").Int()),
		Stream: head.Get("stream").String(), Frame: head.Get("frame").Bool(), Data: buf[:n]}
	if b.Type != TypeBytes {
		return Bytes{}, buf, fmt.Errorf("not a bytes line: %.200s", line)
	}
	return b, buf, nil
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
