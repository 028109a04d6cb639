package streamsink

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/evalhost/evalhost/frames"
)

// FuzzSanitize checks the sanitiser's output alphabet and that splitting a
// stream anywhere never changes the result.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b[31mx\x1b[0m", "\x1b]8;;u\x1b\\l\x1b]8;;\x07", "a\r\nb\rc", "\xed\xa0\x80€\xe2", "\x1bP\x1b\\"} {
		f.Add([]byte(s), uint16(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		whole := Sanitize(string(in))
		checkAlphabet(t, whole)
		cut := int(split) % (len(in) + 1)
		var z sanitizer
		a := z.append(nil, in[:cut])
		if !utf8.Valid(a) {
			t.Fatalf("first chunk %q gives invalid UTF-8 %q", in[:cut], a)
		}
		out := z.flush(z.append(a, in[cut:]))
		if string(out) != whole {
			t.Fatalf("split at %d: %q, whole: %q", cut, out, whole)
		}
	})
}

// FuzzVerbatim: a Verbatim stream split anywhere comes back as the whole
// does, valid UTF-8, and UTF-8 input comes back unchanged.
func FuzzVerbatim(f *testing.F) {
	for _, s := range []string{"\x1b[31mx\x1b[0m\r\n", "\xed\xa0\x80€\xe2", "caf\xc3\xa9 \xf0\x9f\x98", "\xff\xfe\x00\x07"} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		var whole utf8Fixer
		want := whole.flush(whole.append(nil, in))
		if !utf8.Valid(want) || utf8.Valid(in) && string(want) != string(in) {
			t.Fatalf("%q came back as %q", in, want)
		}
		cut := int(split) % (len(in) + 1)
		var z utf8Fixer
		got := z.flush(z.append(z.append(nil, in[:cut]), in[cut:]))
		if string(got) != string(want) {
			t.Fatalf("split at %d: %q, whole: %q", cut, got, want)
		}
	})
}

func checkAlphabet(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8: %q", s)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || (r >= 0x7f && r < 0xa0) {
			t.Fatalf("control %U in output %q", r, s)
		}
	}
	if strings.Contains(s, "\r\n") {
		t.Fatalf("CRLF in output %q", s)
	}
}

// FuzzSink feeds chunks of two streams through a small sink and checks its
// bounds and that the artifact holds every raw byte.
func FuzzSink(f *testing.F) {
	f.Add([]byte("hello\nworld\x1b[1m\r\n€€€\xff"), uint8(7), uint8(3), uint8(3))
	f.Add([]byte(strings.Repeat("ab\r", 30)), uint8(5), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, maxBytes, maxLines, chunk uint8) {
		o := Options{
			Store:      NewStore(t.TempDir()),
			MaxBytes:   4 + int(maxBytes%64),
			MaxLines:   1 + int(maxLines%8),
			MaxColumns: 5,
		}
		s := newSink(t, o)
		step := 1 + int(chunk%16)
		for i, n := 0, 0; i < len(in); i, n = i+step, n+1 {
			typ := frames.TypeStdout
			if n%3 == 2 {
				typ = frames.TypeStderr
			}
			live := s.Write(typ, in[i:min(i+step, len(in))])
			if !utf8.ValidString(live) {
				t.Fatalf("live chunk invalid UTF-8: %q", live)
			}
			if v := s.tail.visible(); len(v) > o.MaxBytes || s.tail.visibleLines() > o.MaxLines {
				t.Fatalf("tail %d bytes %d lines exceeds %d/%d", len(v), s.tail.visibleLines(), o.MaxBytes, o.MaxLines)
			}
		}
		d := closeDump(t, s)
		if !utf8.ValidString(d.Text) || d.KeptLines > o.MaxLines || d.TotalBytes != int64(len(in)) {
			t.Fatalf("dump %+v for %d bytes", d, len(in))
		}
		for _, line := range strings.Split(d.Text, "\n") {
			body, _, _ := strings.Cut(line, "…[+")
			if strings.HasPrefix(line, "[+") {
				_, body, _ = strings.Cut(line, "]…")
			}
			if utf8.RuneCountInString(body) > o.MaxColumns {
				t.Fatalf("line %q longer than %d columns", line, o.MaxColumns)
			}
		}
		if d.ArtifactID == "" {
			if len(in) > o.MaxBytes || d.Truncated && d.KeptBytes > 0 {
				t.Fatalf("no artifact for %d bytes (truncated %v): %q", len(in), d.Truncated, d.Notices)
			}
			return
		}
		got, err := os.ReadFile(d.ArtifactPath)
		if err != nil || string(got) != string(in) {
			t.Fatalf("artifact %q, %v; want %q", got, err, in)
		}
	})
}
