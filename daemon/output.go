package daemon

import (
	"fmt"

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
