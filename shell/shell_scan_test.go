package shell

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

const shellTestNonce = "n0nce"

// shellScanAll feeds stream in pieces cut at cuts and returns the text
// (with each marker shown as <payload>) the scanner produced.
func shellScanAll(stream []byte, cuts []int) string {
	sc := newShellScanner(shellTestNonce)
	var b strings.Builder
	prev := 0
	feed := func(p []byte) {
		sc.Write(p)
		for {
			text, payload, isMark, ok := sc.Next()
			if !ok {
				return
			}
			if isMark {
				b.WriteString("<" + payload + ">")
			} else {
				b.Write(text)
			}
		}
	}
	for _, c := range cuts {
		if c > prev && c <= len(stream) {
			feed(stream[prev:c])
			prev = c
		}
	}
	feed(stream[prev:])
	b.Write(sc.Rest())
	return b.String()
}

func TestShellScanner(t *testing.T) {
	m := func(p string) string { return "\x1eEVH" + shellTestNonce + ":" + p + "\x1e\n" }
	long := strings.Repeat("x", shellMarkMax+10)
	tests := []struct {
		name   string
		stream string
		want   string
	}{
		{"text only", "hello\n", "hello\n"},
		{"marker", "out\n" + m("1:0") + "next", "out\n<1:0>next"},
		{"two markers", m("R:5.2") + m("1:130"), "<R:5.2><1:130>"},
		{"other nonce is text", "\x1eEVHother:1:0\x1e\n", "\x1eEVHother:1:0\x1e\n"},
		{"unterminated prefix is text", "\x1eEVH" + shellTestNonce + ":" + long, "\x1eEVH" + shellTestNonce + ":" + long},
		{"prefix at the end is kept", "a\x1eEVH" + shellTestNonce, "a\x1eEVH" + shellTestNonce},
		{"utf8", "héllo → 世界", "héllo → 世界"},
		// A SIGINT stops a marker's printf partway; bash's newline follows,
		// then the cell's end marker, which must not be lost with it.
		{"marker cut short", "a\x1eEVH" + shellTestNonce + ":S:3\n" + m("3:130") + "b", "a\n<3:130>b"},
		{"marker cut before its end", "\x1eEVH" + shellTestNonce + ":S:3\x1e" + m("3:130"), "<3:130>"},
		{"marker cut, then the next one", "\x1eEVH" + shellTestNonce + ":3" + m("3:0"), "<3:0>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for cut := 0; cut <= len(tt.stream); cut++ {
				if got := shellScanAll([]byte(tt.stream), []int{cut}); got != tt.want {
					t.Fatalf("cut at %d: got %q, want %q", cut, got, tt.want)
				}
			}
		})
	}
}

// Text events never split a rune when the stream is valid UTF-8.
func TestShellScannerRunes(t *testing.T) {
	stream := []byte("ab世界→é")
	for cut := 0; cut <= len(stream); cut++ {
		sc := newShellScanner(shellTestNonce)
		for _, p := range [][]byte{stream[:cut], stream[cut:]} {
			sc.Write(p)
			for {
				text, _, _, ok := sc.Next()
				if !ok {
					break
				}
				if !utf8.Valid(text) {
					t.Fatalf("cut at %d: text event %q splits a rune", cut, text)
				}
			}
		}
	}
}

func FuzzShellScanner(f *testing.F) {
	mark := "\x1eEVH" + shellTestNonce + ":"
	f.Add([]byte("out\n"+mark+"1:0\x1e\nnext"), 3, 9)
	f.Add([]byte(mark+mark+"2:1\x1e\n\xe4\xb8"), 1, 20)
	f.Add([]byte("\x1e\x1eEVH"+shellTestNonce+"x"), 2, 5)
	f.Fuzz(func(t *testing.T, stream []byte, c1, c2 int) {
		whole := shellScanAll(stream, nil)
		split := shellScanAll(stream, []int{c1, c2})
		if whole != split {
			t.Fatalf("feeding in pieces changed the result:\nwhole %q\nsplit %q", whole, split)
		}
		// Removing the markers the scanner reported gives back the input.
		sc := newShellScanner(shellTestNonce)
		sc.Write(stream)
		var text []byte
		var marks int
		for {
			b, payload, isMark, ok := sc.Next()
			if !ok {
				break
			}
			if isMark {
				marks++
				if len(payload) > shellMarkMax || strings.Contains(payload, "\x1e\n") {
					t.Fatalf("payload %q escapes its bounds", payload)
				}
				text = append(text, mark+payload+"\x1e\n"...)
				continue
			}
			text = append(text, b...)
		}
		text = append(text, sc.Rest()...)
		if sc.dropped > 0 { // markers cut short: only their bytes are missing
			if len(text)+sc.dropped != len(stream) {
				t.Fatalf("%d bytes dropped, but %d of %d came back", sc.dropped, len(text), len(stream))
			}
			return
		}
		if !bytes.Equal(text, stream) {
			t.Fatalf("events do not reassemble the input:\n got %q\nwant %q", text, stream)
		}
	})
}

func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "it's", "a\nb", "tab\there", "\\'\x7f", "$(x) `y`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := shellQuote(s)
		if strings.ContainsAny(q, "\n\r") {
			t.Fatalf("quote of %q spans lines: %q", s, q)
		}
		if got, ok := shellUnquote(q); !ok || got != s {
			t.Fatalf("quote of %q = %q reads back as %q (ok %v)", s, q, got, ok)
		}
	})
}

// shellUnquote reads back the two forms shellQuote writes, as bash does.
func shellUnquote(q string) (string, bool) {
	if strings.HasPrefix(q, "$'") && strings.HasSuffix(q, "'") && len(q) >= 3 {
		var b []byte
		body := q[2 : len(q)-1]
		for i := 0; i < len(body); i++ {
			if body[i] != '\\' {
				b = append(b, body[i])
				continue
			}
			if i+1 >= len(body) {
				return "", false
			}
			switch body[i+1] {
			case '\\', '\'':
				b = append(b, body[i+1])
				i++
			case 'x':
				if i+4 > len(body) {
					return "", false
				}
				var v byte
				for _, c := range body[i+2 : i+4] {
					switch {
					case c >= '0' && c <= '9':
						v = v*16 + byte(c-'0')
					case c >= 'a' && c <= 'f':
						v = v*16 + byte(c-'a'+10)
					default:
						return "", false
					}
				}
				b = append(b, v)
				i += 3
			default:
				return "", false
			}
		}
		return string(b), true
	}
	var b strings.Builder
	for len(q) > 0 {
		switch {
		case strings.HasPrefix(q, `\'`):
			b.WriteByte('\'')
			q = q[2:]
		case q[0] == '\'':
			end := strings.IndexByte(q[1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(q[1 : 1+end])
			q = q[end+2:]
		default:
			return "", false
		}
	}
	return b.String(), true
}

func FuzzShellStatSession(f *testing.F) {
	f.Add([]byte("123 (bash) S 1 123 123 34816 123 4194560 ..."))
	f.Add([]byte("9 (a) b) (c) R 1 9 77 0"))
	f.Fuzz(func(t *testing.T, stat []byte) {
		state, sid, ok := shellStatSession(stat)
		if ok && (!shellIsLetter(state) || sid < 0 && !bytes.Contains(stat, []byte("-")) || bytes.LastIndexByte(stat, ')') < 0) {
			t.Fatalf("parsed %q as state %q sid %d", stat, state, sid)
		}
	})
}

func TestShellStatSession(t *testing.T) {
	tests := []struct {
		name      string
		stat      string
		wantState byte
		wantSid   int
		wantOK    bool
	}{
		{"plain", "123 (bash) S 1 123 456 34816", 'S', 456, true},
		{"comm with parens and spaces", "9 (a) b) (c) R 1 9 77 0", 'R', 77, true},
		{"zombie", "9 (x) Z 1 9 9 0", 'Z', 9, true},
		{"truncated", "9 (x) S 1", 0, 0, false},
		{"no comm", "garbage", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, sid, ok := shellStatSession([]byte(tt.stat))
			if st != tt.wantState || sid != tt.wantSid || ok != tt.wantOK {
				t.Errorf("got %q %d %v, want %q %d %v", st, sid, ok, tt.wantState, tt.wantSid, tt.wantOK)
			}
		})
	}
}
