package streamsink

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// wholeDisplayFrame is displayFrame as it was before it read texts in
// pieces: it decodes each text whole, sanitises it whole, re-encodes it
// with json.Marshal and records the shown one with block: a non-empty
// text/markdown, else text/plain, else the HTML's text, else an empty
// text/markdown or text/plain. displayFrame
// must match it byte for byte.
func (s *Sink) wholeDisplayFrame(f frames.Frame) frames.Frame {
	f = s.moveLarge(f)
	if !s.opt.Verbatim {
		cloned := false
		for _, mime := range []string{"text/plain", "text/markdown"} {
			text, ok := f.Bundle.Text(mime)
			if !ok {
				continue
			}
			if clean := Sanitize(text); clean != text {
				if !cloned {
					f.Bundle, cloned = maps.Clone(f.Bundle), true
				}
				f.Bundle[mime], _ = json.Marshal(clean)
			}
		}
	}
	md, mdOK := f.Bundle.Text("text/markdown")
	plain, plainOK := f.Bundle.Text("text/plain")
	html, htmlOK := f.Bundle.Text("text/html")
	switch limit := cmp.Or(max(s.opt.InlineLimit, 0), DefaultInlineLimit); {
	case md != "":
		s.block(md)
	case plain != "":
		s.block(plain)
	case htmlOK && len(f.Bundle["text/html"]) > limit:
		s.block(fmt.Sprintf("[text/html %s]", humanBytes(int64(len(f.Bundle["text/html"])))))
	case htmlOK:
		text := frames.HTMLToText(html)
		if !s.opt.Verbatim {
			text = Sanitize(text)
		}
		s.block(text)
	case mdOK:
		s.block(md)
	case plainOK:
		s.block(plain)
	}
	return f
}

// sinkResult is all a sink hands out for a display: the frame's bundle
// and metadata, the dump, the artifact and the payload files, with the
// store's directory as DIR.
func sinkResult(t *testing.T, s *Sink, dir string, out frames.Frame) string {
	t.Helper()
	var b strings.Builder
	for _, mime := range slices.Sorted(maps.Keys(out.Bundle)) {
		fmt.Fprintf(&b, "%s: %s\n", mime, out.Bundle[mime])
	}
	fmt.Fprintf(&b, "metadata: %s\n", out.Metadata)
	d := closeDump(t, s)
	artifact, _ := os.ReadFile(d.ArtifactPath)
	fmt.Fprintf(&b, "dump: %+v\nartifact: %q\n", d, artifact)
	for _, p := range d.Payloads {
		data, err := os.ReadFile(p.Path)
		fmt.Fprintf(&b, "payload %s: %x %v\n", p.Artifact, sha256.Sum256(data), err)
	}
	return strings.ReplaceAll(b.String(), dir, "DIR")
}

// checkDisplay passes before (a stdout chunk) and then a display with
// bundle through two sinks, one with displayFrame and one with
// wholeDisplayFrame, and wants the same of both.
func checkDisplay(t *testing.T, o Options, before string, bundle frames.Bundle) {
	t.Helper()
	var got [2]string
	for i, whole := range []bool{false, true} {
		o := o
		dir := t.TempDir()
		if o.Store != nil {
			o.Store = NewStore(dir)
		}
		s := newSink(t, o)
		s.Write(frames.TypeStdout, []byte(before))
		f := frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: maps.Clone(bundle)}
		var out frames.Frame
		if whole {
			out = s.wholeDisplayFrame(f)
		} else {
			out = s.Frame(f)
		}
		if !maps.EqualFunc(f.Bundle, bundle, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatal("the caller's bundle was modified")
		}
		got[i] = sinkResult(t, s, dir, out)
	}
	if got[0] != got[1] {
		t.Fatalf("in pieces:\n%.3000s\nwhole:\n%.3000s", got[0], got[1])
	}
}

// displayOptions are the sinks displays pass through: a session's, small
// bounds, and the modes that change what a display records.
var displayOptions = []struct {
	name string
	opt  Options
}{
	{"session", Options{Store: &Store{}}}, // a store in a temporary directory
	{"small tail", Options{Store: &Store{}, MaxBytes: 40, MaxLines: 3, MaxColumns: 10}},
	{"verbatim", Options{Store: &Store{}, Verbatim: true, InlineLimit: -1}},
	{"nospill", Options{Store: &Store{}, NoSpill: true, MaxBytes: 100}},
	{"passthrough", Options{Passthrough: true, MaxBytes: 64}},
	{"no store", Options{MaxBytes: 1000}},
}

// repeatPast repeats unit to at least n bytes; a unit whose length does
// not divide 64 KiB puts its awkward bytes across every piece boundary.
func repeatPast(unit string, n int) string { return strings.Repeat(unit, n/len(unit)+1) }

// awkwardTexts are raw JSON values of display texts with every kind of
// noise, small and large (across the 64 KiB pieces of decoding and
// sanitising, and past the tail and the hold of the artifact).
func awkwardTexts() []struct{ name, raw string } {
	big := 300 << 10
	return []struct{ name, raw string }{
		{"plain", `"2"`},
		{"empty", `""`},
		{"newline only", `"\n"`},
		{"no final newline", `"a\nb"`},
		{"html characters, clean", `"<b>&amp;</b>"`},
		{"html characters, changed", `"<b>\u001b[1m&amp;</b>"`},
		{"ansi", `"\u001b[31mred\u001b[0m\r\n"`},
		{"raw ESC bytes", "\"\x1b[31mred\x1b[0m\""},
		{"cr overwrite", `"10%\r50%\r100%\ndone"`},
		{"cr at the end", `"progress\r"`},
		{"crlf", `"a\r\nb\r\n"`},
		{"invalid utf-8", "\"bad \xff\xfe \xe2\x82 cut \xed\xa0\x80 surrogate\""},
		{"escaped surrogates", `"\ud83d\ude00 \ud83d lone \ude00 low"`},
		{"c1 and separators", `"\u0085next\u2028line\u2029para\u007f"`},
		{"osc", `"\u001b]8;;http://x\u001b\\link\u001b]8;;\u0007 \u001b]0;title unterminated\nnext"`},
		// A piece ends at the newline: kept as it came, the end of the
		// long line cut on a rune boundary would stay in the tail.
		{"long line cut, then a short one", `"` + strings.Repeat("😀", 11) + `\nx"`},
		{"utf-8 clean", `"café ☕ 日本 😀"`},
		{"escaped clean", `"caf\u00e9 \/ \"q\" \\ tab\t"`},
		{"big plain", `"` + strings.Repeat("y", big) + `"`},
		{"big lines", `"` + repeatPast(strings.Repeat("x", 98)+`\n`, big) + `"`},
		{"big one line then lines", `"` + strings.Repeat("z", big) + repeatPast(`ok\n`, 300) + `"`},
		{"big ansi", `"` + repeatPast(`\u001b[31m`+strings.Repeat("x", 80)+`\u001b[0m\r\n`, big) + `"`},
		{"big raw escapes across pieces", "\"" + repeatPast("ab\x1b[1;31mc\x1b]0;t\x07d\r\n", big) + "\""},
		{"big progress", `"` + repeatPast(`\r`+strings.Repeat("#", 61)+` 42%`, big) + `done\n"`},
		{"big utf-8 across pieces", `"` + repeatPast("é€😀x", big) + `"`},
		{"big invalid utf-8 across pieces", "\"" + repeatPast("ab\xe2\x82\xffé", big) + "\""},
		{"big escapes across pieces", `"` + repeatPast(`\ud83d\ude00\u00e9\n\t\u001b`, big) + `"`},
		{"big with one escape at the end", `"` + strings.Repeat("y", big) + `\u001b[0m"`},
		{"big crlf lines", `"` + repeatPast(`line\r\n`, big) + `"`},
	}
}

func TestDisplayInPiecesIsWhole(t *testing.T) {
	defer func(a, b int) { sanPiece, minRun = a, b }(sanPiece, minRun)
	for _, pieces := range []struct{ san, run int }{{64 << 10, 64 << 10}, {3, 0}} {
		sanPiece, minRun = pieces.san, pieces.run
		for _, o := range displayOptions {
			for _, text := range awkwardTexts() {
				t.Run(fmt.Sprintf("%s/%s/%d", o.name, text.name, sanPiece), func(t *testing.T) {
					checkDisplay(t, o.opt, "partial", frames.Bundle{"text/plain": json.RawMessage(text.raw)})
					checkDisplay(t, o.opt, "", frames.Bundle{"text/plain": json.RawMessage(`"<obj>"`),
						"text/markdown": json.RawMessage(text.raw)})
					checkDisplay(t, o.opt, "line\n", frames.Bundle{"text/plain": json.RawMessage(text.raw),
						"text/markdown": json.RawMessage(`"\u001b[1m# T\u001b[0m"`)})
				})
			}
		}
	}
}

// Values Text refuses are left as they are and not recorded; a display
// with no text to show records its HTML's text.
func TestDisplayRefusedValues(t *testing.T) {
	for _, o := range displayOptions {
		for _, raw := range []string{`123`, `null`, `{"a":"b"}`, `"unterminated`, "\"raw\ncontrol\"", `"bad \q"`} {
			t.Run(o.name+"/"+raw, func(t *testing.T) {
				checkDisplay(t, o.opt, "x", frames.Bundle{"text/plain": json.RawMessage(raw)})
				checkDisplay(t, o.opt, "x", frames.Bundle{"text/plain": json.RawMessage(`"p\u001b[0m"`),
					"text/markdown": json.RawMessage(raw)})
				checkDisplay(t, o.opt, "x", frames.Bundle{"text/plain": json.RawMessage(raw),
					"text/html": json.RawMessage(`"<b>h</b>\u001b[1m&#27;[2Jx<br>y"`)})
				checkDisplay(t, o.opt, "x", frames.Bundle{"text/plain": json.RawMessage(raw),
					"text/html": json.RawMessage(raw)})
			})
		}
	}
}

func FuzzDisplayInPieces(f *testing.F) {
	f.Add([]byte("a\x1b[1mb\r\nc\xff"), uint8(0), uint8(3), false)
	f.Add([]byte(`"x\u001b]0;t\n\r\r\n"`), uint8(1), uint8(1), true)
	f.Fuzz(func(t *testing.T, text []byte, opt, piece uint8, asJSON bool) {
		defer func(a, b int) { sanPiece, minRun = a, b }(sanPiece, minRun)
		sanPiece, minRun = 1+int(piece%16), 0
		raw, _ := json.Marshal(string(text))
		if asJSON { // the bytes as a JSON value of their own: escapes, invalid UTF-8
			raw = text
		}
		o := displayOptions[int(opt)%len(displayOptions)].opt
		o.MaxBytes, o.MaxLines = 4+int(piece%32), 1+int(opt%5)
		checkDisplay(t, o, "p", frames.Bundle{"text/plain": raw})
		checkDisplay(t, o, "", frames.Bundle{"text/plain": json.RawMessage(`"p"`), "text/markdown": raw})
	})
}

// The texts a display frame's path is measured with pass as they would
// whole, also past the inline limit.
func TestBigDisplaysInPiecesAreWhole(t *testing.T) {
	for _, d := range bigDisplays {
		t.Run(d.name, func(t *testing.T) {
			checkDisplay(t, Options{Store: &Store{}}, "", bigBundle(d.name, 3<<20))
		})
	}
}

// A display text that sanitising changes gets a new value made once, at
// about its size: not grown by append (HTML characters, which json.Marshal
// escapes, make it larger than the text: 17.6x the text at the peak for
// 5.4x of value), nor left holding the room its bound allowed.
func TestSanitizedValueIsMadeOnce(t *testing.T) {
	for _, tc := range []struct{ name, unit string }{
		{"html", `\u001b[1m` + strings.Repeat("<", 98) + `\n`},
		{"separators", `\u001b[1m` + strings.Repeat("\u2028", 30) + `\n`},
		{"ansi", `\u001b[31m` + strings.Repeat("x", 80) + `\u001b[0m\r\n`},
		{"html in an osc", `\u001b]0;` + strings.Repeat("<", 98) + `\u0007x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := jsonString(repeatTo(tc.unit, 1<<20))
			text, _ := frames.TextPiecesOf(raw)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			value := sanitizedValue(text)
			runtime.ReadMemStats(&after)
			var want string
			json.Unmarshal(raw, &want)
			if wantValue, _ := json.Marshal(Sanitize(want)); !bytes.Equal(value, wantValue) {
				t.Fatalf("value %.100q, want %.100q", value, wantValue)
			}
			// Beside the value: pieces of 64 KiB, and the room MaxValueLen
			// asked for where sanitising made the value smaller.
			limit := uint64(max(text.MaxValueLen(), 2*len(value)) + 1<<20)
			if got := after.TotalAlloc - before.TotalAlloc; got > limit {
				t.Errorf("%d bytes allocated for a value of %d (text %d); want at most %d", got, len(value), len(raw), limit)
			}
			if cap(value) > 2*len(value)+64 {
				t.Errorf("the value of %d bytes holds %d", len(value), cap(value))
			}
		})
	}
}
