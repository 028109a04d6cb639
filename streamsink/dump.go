package streamsink

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/plural"
)

// Dump is the state of a sink: what a cell summary carries.
type Dump struct {
	// Text is the kept tail, "\r" lines collapsed, long lines clamped.
	Text string `json:"text"`
	// Truncated is true when Text is not all of the output.
	Truncated bool `json:"truncated"`
	// TotalLines counts sanitised lines, an unterminated last line included.
	TotalLines int64 `json:"totalLines"`
	// TotalBytes counts raw bytes received (the size of a full artifact).
	TotalBytes int64 `json:"totalBytes"`
	// KeptLines and KeptBytes describe Text.
	KeptLines int `json:"keptLines"`
	KeptBytes int `json:"keptBytes"`
	// Notices are lines for the reader: "[…N lines elided…]", where the
	// full output is, what failed.
	Notices []string `json:"notices,omitempty"`
	// ArtifactID names the raw-output artifact ("7.eval.log"); refer to it
	// as "artifact://" + ArtifactID. Empty when nothing was spilled.
	ArtifactID   string `json:"artifactId,omitempty"`
	ArtifactPath string `json:"artifactPath,omitempty"`
	// Payloads lists display values moved to the store.
	Payloads []Payload `json:"payloads,omitempty"`
}

// String renders the notices, one per line, then the text.
func (d Dump) String() string {
	if len(d.Notices) == 0 {
		return d.Text
	}
	return strings.Join(d.Notices, "\n") + "\n" + d.Text
}

// Dump returns the sink's state. After Close it is final; before, bytes
// held back by the sanitisers are not in it yet.
func (s *Sink) Dump() Dump {
	s.mu.Lock()
	defer s.mu.Unlock()
	text, clamped := clampLines(string(s.tail.visible()), s.opt.MaxColumns, s.tail.headCut > 0)
	d := Dump{
		Text:         text,
		Truncated:    s.tail.truncated() || clamped > 0,
		TotalLines:   s.tail.totalLines(),
		TotalBytes:   s.spill.total,
		KeptLines:    countLines(text),
		KeptBytes:    len(text),
		ArtifactID:   s.spill.id,
		ArtifactPath: s.spill.path,
		Payloads:     append([]Payload(nil), s.payloads...),
	}
	d.Notices = s.dumpNotices(clamped)
	return d
}

func (s *Sink) dumpNotices(clamped int) []string {
	var n []string
	t := &s.tail
	switch {
	case t.droppedLines > 0 && t.headCut > 0:
		n = append(n, fmt.Sprintf("[…%s and %s of a long line elided…]", plural.Of(t.droppedLines, "line"), humanBytes(t.headCut)))
	case t.droppedLines > 0:
		n = append(n, fmt.Sprintf("[…%s elided…]", plural.Of(t.droppedLines, "line")))
	case t.droppedBytes > 0:
		n = append(n, fmt.Sprintf("[…%s of a long line elided…]", humanBytes(t.droppedBytes)))
	}
	switch {
	case s.spill.id != "" && s.spill.cut > 0:
		n = append(n, fmt.Sprintf("[head and tail of the output (artifact capped at %s): %s%s (%s of %s elided) at %s]",
			humanBytes(s.spill.cap), Scheme, s.spill.id, humanBytes(s.spill.cut), humanBytes(s.spill.total), s.spill.path))
	case s.spill.id != "":
		n = append(n, fmt.Sprintf("[full output: %s%s (%s) at %s]", Scheme, s.spill.id, humanBytes(s.spill.total), s.spill.path))
	}
	if s.spill.err != nil {
		n = append(n, fmt.Sprintf("[full output not saved (%v); only the tail is kept]", s.spill.err))
	}
	if clamped > 0 {
		n = append(n, fmt.Sprintf("[%s clamped to %s]", plural.Of(clamped, "line"), plural.Of(s.opt.MaxColumns, "column")))
	}
	return append(n, s.notices...)
}

// clampLines cuts lines longer than cols characters and says how many it
// cut. A line keeps its first cols characters, except a first line whose
// head was already cut (headCut): it keeps its last ones, so that the end
// of a long line stays in the tail.
func clampLines(text string, cols int, headCut bool) (string, int) {
	var b strings.Builder
	clamped := 0
	rest := text
	for rest != "" {
		line, after, found := strings.Cut(rest, "\n")
		rest = after
		if len(line) > cols {
			if n := utf8.RuneCountInString(line); n > cols {
				if clamped == 0 {
					b.Grow(len(text))
					b.WriteString(text[:len(text)-len(rest)-len(line)-boolInt(found)])
				}
				clamped++
				if headCut && len(rest)+len(line)+boolInt(found) == len(text) {
					line = fmt.Sprintf("[+%s]…%s", plural.Of(n-cols, "char"), line[runeOffset(line, n-cols):])
				} else {
					line = fmt.Sprintf("%s…[+%s]", line[:runeOffset(line, cols)], plural.Of(n-cols, "char"))
				}
			}
		}
		if clamped > 0 {
			b.WriteString(line)
			if found {
				b.WriteByte('\n')
			}
		}
	}
	if clamped == 0 {
		return text, 0
	}
	return b.String(), clamped
}

// wideLine reports whether text has a line longer than cols characters.
func wideLine(text []byte, cols int) bool {
	for line := range bytes.Lines(text) {
		if len(line) > cols && utf8.RuneCount(bytes.TrimSuffix(line, []byte{'\n'})) > cols {
			return true
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runeOffset returns the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

func countLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

func humanBytes(n int64) string { return HumanBytes(n) }

// HumanBytes formats a size for notices in binary units, the unit every
// size evalhost takes is read in (parseSize: "512M" is 512 MiB): "512 B",
// "1.5 KiB", "1.0 GiB".
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
