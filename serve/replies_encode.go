package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/evalhost/evalhost/frames"
)

// Every request ends with a cell_end per cell and an end: they are built
// by hand, as encodeLine would build them (same fields, order and text),
// without reflection. The cell's output (streamsink.Dump, which grows
// fields) still goes through encoding/json. replies_encode_test.go holds
// them to encodeLine's bytes.

// appendEnd appends e and its newline.
func appendEnd(dst []byte, e *End) ([]byte, error) {
	dst = append(dst, `{"durationMs":`...)
	dst, err := appendFloat(dst, e.DurationMs)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"failedCell":`...)
	dst = strconv.AppendInt(dst, int64(e.FailedCell), 10)
	if e.ID != "" {
		dst = append(dst, `,"id":`...)
		dst = frames.AppendString(dst, e.ID)
	}
	dst = append(dst, `,"status":`...)
	dst = frames.AppendString(dst, string(e.Status))
	dst = append(dst, `,"type":`...)
	dst = frames.AppendString(dst, e.Type)
	return append(dst, "}\n"...), nil
}

// appendCellEnd appends c and its newline.
func appendCellEnd(dst []byte, c *CellEnd) ([]byte, error) {
	r := &c.CellResult
	dst = append(dst, `{"type":`...)
	dst = frames.AppendString(dst, c.Type)
	if c.ID != "" {
		dst = append(dst, `,"id":`...)
		dst = frames.AppendString(dst, c.ID)
	}
	dst = append(dst, `,"cell":`...)
	dst = strconv.AppendInt(dst, int64(r.Index), 10)
	dst = append(dst, `,"language":`...)
	dst = frames.AppendString(dst, r.Language)
	if r.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = frames.AppendString(dst, r.Title)
	}
	if len(r.Tags) > 0 {
		dst = append(dst, `,"tags":[`...)
		for i, t := range r.Tags {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = frames.AppendString(dst, t)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"status":`...)
	dst = frames.AppendString(dst, string(r.Status))
	dst = append(dst, `,"executionCount":`...)
	dst = strconv.AppendInt(dst, int64(r.ExecutionCount), 10)
	dst = append(dst, `,"durationMs":`...)
	dst, err := appendFloat(dst, r.DurationMs)
	if err != nil {
		return nil, err
	}
	dst = strconv.AppendBool(append(dst, `,"stateLost":`...), r.StateLost)
	dst = strconv.AppendBool(append(dst, `,"retried":`...), r.Retried)
	if r.Recycled {
		dst = append(dst, `,"recycled":true`...)
	}
	if r.Message != "" {
		dst = append(dst, `,"message":`...)
		dst = frames.AppendString(dst, r.Message)
	}
	dst = append(dst, `,"output":`...)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&r.Output); err != nil {
		return nil, err
	}
	dst = append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	if r.Job != "" {
		dst = append(dst, `,"job":`...)
		dst = frames.AppendString(dst, r.Job)
	}
	if r.JobOffset != 0 {
		dst = append(dst, `,"jobOffset":`...)
		dst = strconv.AppendInt(dst, r.JobOffset, 10)
	}
	return append(dst, "}\n"...), nil
}

// appendFloat formats f as encoding/json does.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b, err := json.Marshal(f)
		return append(dst, b...), err
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
}
