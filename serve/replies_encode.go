package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
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
		dst = appendStrings(append(dst, `,"tags":`...), r.Tags)
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
	if r.StoppedMs != 0 {
		if dst, err = appendFloat(append(dst, `,"stoppedMs":`...), r.StoppedMs); err != nil {
			return nil, err
		}
	}
	dst = strconv.AppendBool(append(dst, `,"stateLost":`...), r.StateLost)
	dst = strconv.AppendBool(append(dst, `,"retried":`...), r.Retried)
	if r.Exited {
		dst = append(dst, `,"exited":true`...)
	}
	if r.Recycled {
		dst = append(dst, `,"recycled":true`...)
	}
	if r.Message != "" {
		dst = append(dst, `,"message":`...)
		dst = frames.AppendString(dst, r.Message)
	}
	if r.ExitStatus != 0 {
		dst = strconv.AppendInt(append(dst, `,"exitStatus":`...), int64(r.ExitStatus), 10)
	}
	if r.ExitMessage != nil {
		dst = append(dst, `,"exitMessage":`...)
		dst = frames.AppendString(dst, *r.ExitMessage)
	}
	if r.Signal != 0 {
		dst = strconv.AppendInt(append(dst, `,"signal":`...), int64(r.Signal), 10)
	}
	dst = append(dst, `,"output":`...)
	dst, err = appendDump(dst, &r.Output)
	if err != nil {
		return nil, err
	}
	if r.Job != "" {
		dst = append(dst, `,"job":`...)
		dst = frames.AppendString(dst, r.Job)
	}
	if r.JobOffset != 0 {
		dst = strconv.AppendInt(append(dst, `,"jobOffset":`...), r.JobOffset, 10)
	}
	if r.CancelledBeforeStart {
		dst = append(dst, `,"notStarted":true`...)
	}
	return append(dst, "}\n"...), nil
}

// appendDump appends a cell's output summary as encoding/json (HTML
// escaping off) writes it; one with payloads is left to encoding/json.
func appendDump(dst []byte, d *streamsink.Dump) ([]byte, error) {
	if len(d.Payloads) > 0 {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
		return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...), nil
	}
	dst = frames.AppendString(append(dst, `{"text":`...), d.Text)
	dst = strconv.AppendBool(append(dst, `,"truncated":`...), d.Truncated)
	dst = strconv.AppendInt(append(dst, `,"totalLines":`...), d.TotalLines, 10)
	dst = strconv.AppendInt(append(dst, `,"totalBytes":`...), d.TotalBytes, 10)
	dst = strconv.AppendInt(append(dst, `,"keptLines":`...), int64(d.KeptLines), 10)
	dst = strconv.AppendInt(append(dst, `,"keptBytes":`...), int64(d.KeptBytes), 10)
	if len(d.Notices) > 0 {
		dst = appendStrings(append(dst, `,"notices":`...), d.Notices)
	}
	if d.ArtifactID != "" {
		dst = frames.AppendString(append(dst, `,"artifactId":`...), d.ArtifactID)
	}
	if d.ArtifactPath != "" {
		dst = frames.AppendString(append(dst, `,"artifactPath":`...), d.ArtifactPath)
	}
	return append(dst, '}'), nil
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

// appendStrings appends ss as a JSON array of strings.
func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, x := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = frames.AppendString(dst, x)
	}
	return append(dst, ']')
}
