package streamsink

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello\n\tworld", "hello\n\tworld"},
		{"empty", "", ""},
		{"sgr colour", "\x1b[31mred\x1b[0m ok", "red ok"},
		{"csi with params", "\x1b[1;32;48;5;200mx\x1b[2K\x1b[?25l", "x"},
		{"osc title bel", "\x1b]0;title\x07after", "after"},
		{"osc 8 link st", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ text", "link text"},
		{"osc 8 link bel", "\x1b]8;id=1;http://x\x07L\x1b]8;;\x07", "L"},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"apc", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
		{"charset nF", "\x1b(Babc", "abc"},
		{"esc single", "\x1b7x\x1b8\x1bM", "x"},
		{"esc then newline kept", "a\x1b\nb", "a\nb"},
		{"broken csi keeps newline", "a\x1b[12\nb", "a\nb"},
		{"csi cancelled by CAN", "a\x1b[1\x18b", "ab"},
		{"osc interrupted by new csi", "\x1b]0;t\x1b[31mx", "x"},
		{"nul", "a\x00b\x00", "ab"},
		{"c0 controls", "a\x01\x02\x07\x08\x0b\x0c\x7fb", "ab"},
		{"c1 controls", "a\u0085\u009bb", "ab"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"lone cr kept", "10%\r20%\r100%\n", "10%\r20%\r100%\n"},
		{"cr cr lf", "a\r\r\nb", "a\nb"},
		{"trailing cr flushed", "done\r", "done\r"},
		{"cr before escape then lf", "x\r\x1b[K\n", "x\n"},
		{"invalid byte", "a\xffb", "a\uFFFDb"},
		{"truncated sequence mid text", "a\xe2\x82b", "a\uFFFDb"},
		{"lone surrogate high", "a\xed\xa0\x80b", "a\uFFFD\uFFFD\uFFFDb"},
		{"lone surrogate low", "\xed\xbf\xbf", "\uFFFD\uFFFD\uFFFD"},
		{"overlong", "\xc0\xaf", "\uFFFD\uFFFD"},
		{"unfinished at end", "ok\xe2\x82", "ok\uFFFD"},
		{"maximal subparts as Python decodes them", "x\xf0\x9f\x98y\xed\xa0\x80z\xc0\xaf", "x\uFFFDy\uFFFD\uFFFD\uFFFDz\uFFFD\uFFFD"},
		{"valid multibyte", "héllo €𝄞 日本", "héllo €𝄞 日本"},
		{"raw 8-bit csi byte", "a\x9b31mb", "a\uFFFD31mb"},
		{"unterminated osc swallows rest", "a\x1b]0;never ends", "a"},
		{"unterminated osc ends at newline", "start \x1b]0;my title\nresult 1\nresult 2\n", "start \nresult 1\nresult 2\n"},
		{"osc 8 link without its end", "see \x1b]8;;http://x\x1b\\here\nnext\n", "see here\nnext\n"},
		{"unterminated osc cut by newline then st", "a\x1b]2;t\nb\x1b\\c", "a\nbc"},
		{"unicode separators kept", "a\u2028b", "a\u2028b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Sanitize(tc.in)
			if got != tc.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("invalid UTF-8 out: %q", got)
			}
		})
	}
}

// Every split of the input into two or three chunks must give the same
// text as the whole input.
func TestSanitizeSplitAnywhere(t *testing.T) {
	inputs := []string{
		"\x1b[31mred\x1b[0m\r\nnext",
		"\x1b]8;;https://example.com/a\x1b\\link\x1b]8;;\x1b\\",
		"€𝄞日\xed\xa0\x80\xe2\x82x",
		"p 10%\r\x1b[2Kp 100%\r\n",
		"a\x1bPdata\x1b\\b\x1b(Bc",
		"a\x1b]0;title\nb\x1b]8;;u\x07c",
	}
	for _, in := range inputs {
		want := Sanitize(in)
		for i := 0; i <= len(in); i++ {
			for j := i; j <= len(in); j++ {
				var z sanitizer
				var out []byte
				for _, part := range []string{in[:i], in[i:j], in[j:]} {
					out = z.append(out, []byte(part))
				}
				out = z.flush(out)
				if string(out) != want {
					t.Fatalf("split %q|%q|%q = %q, want %q", in[:i], in[i:j], in[j:], out, want)
				}
			}
		}
	}
}

func TestSanitizeBoundsStraySequences(t *testing.T) {
	long := "\x1b]" + strings.Repeat("x", maxStr+10) + "visible"
	if got := Sanitize(long); !strings.HasSuffix(got, "visible") {
		t.Errorf("unterminated OSC swallowed text past %d bytes: tail %q", maxStr, got[max(0, len(got)-20):])
	}
	csiRun := "\x1b[" + strings.Repeat("1", maxCSI+10) + "m"
	if got := Sanitize(csiRun); len(got) > 20 {
		t.Errorf("over-long CSI kept %d bytes, want the excess only", len(got))
	}
}

func TestPlainPrefix(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"abcdefgh\nijklmnop", 17},
		{"abcdefgh\x1bijk", 8},
		{"abcdefghij\x7f", 10},
		{"abcdefghijklmno\x80", 15},
		{"\r", 0},
		{"tab\there~", 9},
	}
	for _, tc := range tests {
		if got := plainPrefix([]byte(tc.in)); got != tc.want {
			t.Errorf("plainPrefix(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 17; pos++ {
			buf := []byte(strings.Repeat("a", 17))
			buf[pos] = byte(b)
			want := 17
			if !plain[b] {
				want = pos
			}
			if got := plainPrefix(buf); got != want {
				t.Fatalf("byte %#x at %d: plainPrefix = %d, want %d", b, pos, got, want)
			}
		}
	}
}
