package frames

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// textCases are JSON values whose decoding has corners: escapes, surrogate
// pairs (split, lone, reversed), invalid UTF-8 (also cut by a piece
// boundary), controls, and values Text refuses.
var textCases = []string{
	`""`, `"2"`, `"plain text"`, `"caf\u00e9 ☕ 日本"`, `"a\nb\tc\"d\\e\/f\bg\fh\ri"`,
	`"\ud83d\ude00 smile"`, `"\ud83d lone high"`, `"\ude00 lone low"`, `"\ude00\ud83d reversed"`,
	`"\ud83d\u0041 high then A"`, `"\uD83D\uDE00 upper hex"`, "\"bad \xff\xfe utf8 \xe2\x82 cut\"",
	"\"\xed\xa0\x80 surrogate bytes\"", `"\u001b[31mred\u001b[0m"`, "\"trailing space\" \t\r\n",
	`"<html> & 'quotes'"`, "\"\u2028\u2029 separators\"", "\"<>&\xff\xe2\x80\u2028\"",
	// Refused:
	``, `"`, `"unterminated`, `2`, `null`, `{"a":1}`, `"bad \x escape"`, `"\u12"`, `"\u12g4"`,
	"\"raw\ncontrol\"", `"a" x`, `"a""b"`, ` "leading space"`,
}

func joinPieces(p TextPieces) string {
	var out []byte
	for piece := p.Next(); piece != nil; piece = p.Next() {
		if len(piece) == 0 {
			panic("empty piece")
		}
		out = append(out, piece...)
	}
	return string(out)
}

func checkPieces(t *testing.T, raw []byte) {
	t.Helper()
	want, wantOK := Bundle{"m": raw}.Text("m")
	p, ok := Bundle{"m": raw}.Pieces("m")
	if ok != wantOK {
		t.Fatalf("%q: Pieces ok %v, Text ok %v", raw, ok, wantOK)
	}
	if got := joinPieces(p); ok && got != want {
		t.Fatalf("%q: pieces %q, Text %q", raw, got, want)
	}
	if !ok {
		return
	}
	// The bound holds for the text and for texts made of it by leaving
	// characters out, such as every other one of its runes.
	var fewer []rune
	for i, r := range []rune(want) {
		if i%2 == 1 {
			fewer = append(fewer, r)
		}
	}
	for _, text := range []string{want, string(fewer)} {
		if value, _ := json.Marshal(text); p.MaxValueLen() < len(value) {
			t.Fatalf("%q: MaxValueLen %d, but %q makes %d bytes of JSON", raw, p.MaxValueLen(), text, len(value))
		}
	}
}

// The pieces joined are what Text returns, whatever the size of a piece.
func TestPiecesAreText(t *testing.T) {
	defer func(old int) { pieceSize = old }(pieceSize)
	for _, size := range []int{1, 2, 3, 7, 64 << 10} {
		pieceSize = size
		for _, raw := range textCases {
			checkPieces(t, []byte(raw))
		}
		long := `"` + strings.Repeat(`x\n\u00e9€\ud83d\ude00`+"\xff", 3000) + `"`
		checkPieces(t, []byte(long))
	}
}

func FuzzPieces(f *testing.F) {
	for _, raw := range textCases {
		f.Add([]byte(raw), uint8(3))
	}
	f.Fuzz(func(t *testing.T, raw []byte, size uint8) {
		defer func(old int) { pieceSize = old }(pieceSize)
		pieceSize = 1 + int(size%32)
		checkPieces(t, raw)
	})
}

// A TextValue is json.Marshal of the text, wherever the pieces end, and
// so is SetText.
func FuzzTextValue(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\x00\x1f\x7f\b\f\n\r\t", "\u2028\u2029é€😀",
		"\xff\xe2\x82\xed\xa0\x80", "€€€"} {
		f.Add([]byte(s), uint8(1), uint8(2))
	}
	f.Fuzz(func(t *testing.T, s []byte, cut1, cut2 uint8) {
		want, _ := json.Marshal(string(s))
		i := int(cut1) % (len(s) + 1)
		j := i + int(cut2)%(len(s)-i+1)
		var v TextValue
		for _, piece := range [][]byte{s[:i], s[i:j], s[j:]} {
			v.Write(piece)
		}
		if got := v.Value(); !bytes.Equal(got, want) {
			t.Fatalf("%q in pieces at %d, %d: %s, want %s", s, i, j, got, want)
		}
		b := Bundle{}
		b.SetText("m", string(s))
		if !bytes.Equal(b["m"], want) {
			t.Fatalf("SetText(%q) = %s, want %s", s, b["m"], want)
		}
	})
}
