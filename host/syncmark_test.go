package host

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

const testNonce = "0123abcd"

func mark(id string) string { return "\x00\x1eEVH" + testNonce + ":" + id + "\x1e\x00" }

// scanAll feeds in as the given chunks, carrying what split leaves out the
// way readRaw does, and returns the text and the marks.
func scanAll(in []byte, cuts []int) (text []byte, marks []string, segs [][]byte) {
	s := newMarkScanner(testNonce)
	var buf []segment
	var carry []byte
	prev := 0
	feed := func(p []byte) {
		data := append(carry, p...)
		var keep int
		buf, keep = s.split(data, buf[:0])
		carry = append([]byte(nil), data[len(data)-keep:]...)
		for _, sg := range buf {
			if sg.isMark {
				marks = append(marks, sg.mark)
				continue
			}
			text = append(text, sg.text...)
			segs = append(segs, append([]byte(nil), sg.text...))
		}
	}
	for _, c := range cuts {
		if c < prev || c > len(in) {
			continue
		}
		feed(in[prev:c])
		prev = c
	}
	feed(in[prev:])
	if len(carry) > 0 {
		text = append(text, carry...)
		segs = append(segs, carry)
	}
	return text, marks, segs
}

// refScan is the whole-input definition of a mark the streaming scanner
// must agree with.
func refScan(in []byte) (text []byte, marks []string) {
	prefix := []byte(mark("")[:len(mark(""))-len(markTerm)])
	for {
		j := bytes.Index(in, prefix)
		if j < 0 {
			return append(text, in...), marks
		}
		rest := in[j+len(prefix):]
		t := bytes.Index(rest[:min(len(rest), maxMarkID+len(markTerm))], []byte(markTerm))
		if t < 0 {
			text = append(text, in[:j+1]...)
			in = in[j+1:]
			continue
		}
		text = append(text, in[:j]...)
		marks = append(marks, string(rest[:t]))
		in = rest[t+len(markTerm):]
	}
}

func everyByte(n int) []int {
	cuts := make([]int, n)
	for i := range cuts {
		cuts[i] = i
	}
	return cuts
}

func TestMarkScanner(t *testing.T) {
	long := strings.Repeat("y", maxMarkID+10)
	cases := []struct {
		name  string
		in    string
		text  string
		marks []string
	}{
		{name: "plain", in: "hello\n", text: "hello\n"},
		{name: "mark alone", in: mark("c1"), marks: []string{"c1"}},
		{name: "text around marks", in: "a" + mark("c1") + "b" + mark("c2") + "c", text: "abc", marks: []string{"c1", "c2"}},
		{name: "wrong nonce is text", in: "\x00\x1eEVHffff:c1\x1e\x00", text: "\x00\x1eEVHffff:c1\x1e\x00"},
		{name: "unterminated mark at end is text", in: "x" + mark("c1")[:10], text: "x" + mark("c1")[:10]},
		{name: "overlong id is text", in: mark(long)[:len(mark(long))-2] + "z", text: mark(long)[:len(mark(long))-2] + "z"},
		{name: "nul bytes in text", in: "\x00\x00\x1e" + mark("c9") + "\x00", text: "\x00\x00\x1e\x00", marks: []string{"c9"}},
		{name: "multibyte text", in: "é€😀" + mark("c1") + "ü", text: "é€😀ü", marks: []string{"c1"}},
	}
	for _, tc := range cases {
		for _, chunking := range []struct {
			name string
			cuts []int
		}{{"whole", nil}, {"bytewise", everyByte(len(tc.in))}, {"halves", []int{len(tc.in) / 2}}} {
			t.Run(tc.name+"/"+chunking.name, func(t *testing.T) {
				text, marks, segs := scanAll([]byte(tc.in), chunking.cuts)
				if string(text) != tc.text {
					t.Errorf("text = %q, want %q", text, tc.text)
				}
				if strings.Join(marks, ",") != strings.Join(tc.marks, ",") {
					t.Errorf("marks = %q, want %q", marks, tc.marks)
				}
				if utf8.ValidString(tc.text) {
					for _, s := range segs {
						if !utf8.Valid(s) {
							t.Errorf("segment %q splits a UTF-8 sequence", s)
						}
					}
				}
			})
		}
	}
}

func FuzzMarkScanner(f *testing.F) {
	f.Add([]byte("a"+mark("c1")+"é"), uint8(3), uint8(7))
	f.Add([]byte(mark("x")+mark("y")), uint8(1), uint8(1))
	f.Add([]byte("\x00\x1eEVH0123"), uint8(2), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, step, phase uint8) {
		var cuts []int
		if step > 0 {
			for c := int(phase) % int(step); c < len(in); c += int(step) {
				cuts = append(cuts, c)
			}
		}
		text, marks, segs := scanAll(in, cuts)
		wantText, wantMarks := refScan(in)
		if !bytes.Equal(text, wantText) {
			t.Fatalf("text = %q, want %q", text, wantText)
		}
		if strings.Join(marks, "\x01") != strings.Join(wantMarks, "\x01") {
			t.Fatalf("marks = %q, want %q", marks, wantMarks)
		}
		if utf8.Valid(wantText) && len(marks) == 0 {
			for _, s := range segs {
				if !utf8.Valid(s) {
					t.Fatalf("segment %q splits a UTF-8 sequence", s)
				}
			}
		}
	})
}

func TestTailRing(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "short", writes: []string{"a\n", "b\n"}, want: "a\nb"},
		{name: "wraps to a line boundary", writes: []string{strings.Repeat("x", tailSize), "cut\nkept\n"}, want: "kept"},
		{name: "one huge write", writes: []string{"head\n" + strings.Repeat("z", tailSize) + "\nend"}, want: "end"},
		{name: "invalid utf8 replaced", writes: []string{"bad \xff byte"}, want: "bad \uFFFD byte"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r tailRing
			for _, w := range tc.writes {
				r.Write([]byte(w))
			}
			if got := r.String(); got != tc.want {
				t.Errorf("tail = %q, want %q", got, tc.want)
			}
		})
	}
}
