package termrelay

import (
	"bytes"
	"testing"
)

func TestCRLFWriter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"line ends", []string{"a\r\nb\r\n"}, "a\nb\n"},
		{"a child's own CRLF", []string{"a\r\r\n"}, "a\r\n"},
		{"a lone CR", []string{"50%\r60%\r"}, "50%\r60%\r"},
		{"split between writes", []string{"a\r", "\nb"}, "a\nb"},
		{"CR then other", []string{"a\r", "b"}, "a\rb"},
		{"CR at the end", []string{"a\r"}, "a\r"},
		{"empty write keeps it", []string{"a\r", "", "\n"}, "a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			w := &crlfWriter{w: &got}
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			w.flush()
			if got.String() != tc.want {
				t.Errorf("wrote %q, want %q", got.String(), tc.want)
			}
		})
	}
}

func FuzzCRLFWriter(f *testing.F) {
	f.Add([]byte("a\r\nb\r\r\n\r"), 3)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		// What ONLCR makes of the output comes back as it was, however it
		// is split.
		var mapped []byte
		for _, b := range data {
			if b == '\n' {
				mapped = append(mapped, '\r')
			}
			mapped = append(mapped, b)
		}
		var got bytes.Buffer
		w := &crlfWriter{w: &got}
		if split < 0 {
			split = -split
		}
		split %= len(mapped) + 1
		w.Write(mapped[:split])
		w.Write(mapped[split:])
		w.flush()
		if !bytes.Equal(got.Bytes(), data) {
			t.Errorf("%q mapped %q came back %q", data, mapped, got.Bytes())
		}
	})
}
