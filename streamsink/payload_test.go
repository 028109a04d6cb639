package streamsink

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// wholePayloadFile is payloadFile as it was before it wrote values as they
// are decoded: the string decoded whole, then base64 decoded whole.
// payloadFile must store the same bytes under the same extension.
func wholePayloadFile(mime string, raw json.RawMessage) ([]byte, string) {
	ext, ok := mimeExt[mime]
	if !ok {
		ext = "json"
	}
	var text string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &text) != nil {
		return raw, "json"
	}
	if !ok {
		ext = "txt"
	}
	if isBinary(mime) {
		clean := strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == ' ' {
				return -1
			}
			return r
		}, text)
		if data, err := base64.StdEncoding.DecodeString(clean); err == nil {
			if !ok {
				ext = "bin"
			}
			return data, ext
		}
	}
	return []byte(text), ext
}

func checkPayloadFile(t *testing.T, mime string, raw []byte) {
	t.Helper()
	want, wantExt := wholePayloadFile(mime, raw)
	file, asText := payloadFile(mime, raw)
	var got bytes.Buffer
	ext := file.ext
	n, err := file.write(&got)
	if errors.Is(err, errNotBase64) { // as savePayload does: a new file
		got.Reset()
		ext = asText.ext
		n, err = asText.write(&got)
	}
	if err != nil || ext != wantExt || n != int64(got.Len()) || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%s %.200q: %.200q (%d) as %q, %v; want %.200q as %q", mime, raw, got.Bytes(), n, ext, err, want, wantExt)
	}
}

var payloadMIMEs = []string{"image/png", "audio/x-new", "image/svg+xml", "text/html", "application/x-new", "application/json"}

func TestPayloadFileIsWhole(t *testing.T) {
	defer func(old int) { b64Batch = old }(b64Batch)
	bin := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 1, 0xff}, 30000)
	b64 := base64.StdEncoding.EncodeToString(bin)
	values := []string{
		`"` + b64 + `"`,
		`"` + strings.Join(strings.SplitAfter(b64, "AAAA"), `\n`) + `"`, // escaped newlines
		`"` + b64[:len(b64)-4] + ` \r\n` + b64[len(b64)-4:] + `\n"`,
		`"` + b64[:1000] + `=` + b64[1000:] + `"`, // padding too early
		`"` + b64 + `AA=="`, `"` + b64 + `AAA="`, `"` + b64 + `A==="`, `"` + b64 + `A"`, `"` + b64 + `==AA"`,
		`"` + b64 + "\t" + `"`, "\"" + b64 + "\xff\"", `"` + b64 + `\u00e9"`,
		`"QQ==QQ=="`, `"` + b64[:4000] + `QQ==` + b64[4000:] + `"`, // data after the padding
		`""`, `"QQ=="`, `"QQ="`, `"Q"`, `"<svg>caf\u00e9</svg>"`,
		`{"k":[1,2]}`, `123`, `null`, `"unterminated`,
	}
	for _, batch := range []int{64 << 10, 4, 5, 8} {
		b64Batch = batch
		for _, mime := range payloadMIMEs {
			for _, raw := range values {
				checkPayloadFile(t, mime, []byte(raw))
			}
		}
	}
}

func FuzzPayloadFile(f *testing.F) {
	f.Add([]byte(`"QUJD\nREVG"`), uint8(0), uint8(1))
	f.Add([]byte(`"QQ==QQ=="`), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, mime, batch uint8) {
		defer func(old int) { b64Batch = old }(b64Batch)
		b64Batch = 1 + int(batch%16)
		checkPayloadFile(t, payloadMIMEs[int(mime)%len(payloadMIMEs)], raw)
	})
}

// wholePlainWithRefs is how moveLarge made text/plain before it read the
// text in pieces: decoded whole, the lines appended, encoded by SetText.
func wholePlainWithRefs(raw json.RawMessage, moved []Payload) json.RawMessage {
	b := frames.Bundle{"text/plain": raw}
	plain, _ := b.Text("text/plain")
	for _, p := range moved {
		plain = strings.TrimSuffix(plain, "\n")
		if plain != "" {
			plain += "\n"
		}
		plain += fmt.Sprintf("[%s %s: %s]", p.MIME, humanBytes(p.Bytes), p.Artifact)
	}
	b.SetText("text/plain", plain)
	return b["text/plain"]
}

var movedSets = [][]Payload{
	{{MIME: "image/png", Artifact: "artifact://12.png", Bytes: 1 << 20}},
	{{MIME: "application/json", Artifact: "artifact://3.json", Bytes: 300},
		{MIME: "text/html", Artifact: "artifact://4.html", Bytes: 5 << 30}},
	{{MIME: "x/<&>\u2028", Artifact: "artifact://5.bin", Bytes: 1}},
}

func checkPlainWithRefs(t *testing.T, raw json.RawMessage, moved []Payload) {
	t.Helper()
	want := wholePlainWithRefs(raw, moved)
	if got := plainWithRefs(raw, moved); !bytes.Equal(got, want) {
		t.Fatalf("text/plain %.200q with %d refs:\n got %.300q\nwant %.300q", raw, len(moved), got, want)
	}
}

// moveLarge reads text/plain in pieces and makes what it made of the text
// decoded whole.
func TestPlainWithRefsIsWhole(t *testing.T) {
	// 64 bytes a line: a piece of 64 KiB ends on a newline.
	unit := strings.Repeat("x", 63) + `\n`
	values := []string{`""`, `"\n"`, `"\n\n"`, `"a\n"`, `"a"`, `"a\n\n"`, `123`, `null`, `"bad \q"`,
		`"` + strings.Repeat(unit, 1024) + `"`, `"` + strings.Repeat(unit, 1024) + `x"`,
		`"` + strings.Repeat(unit, 2048) + `\n"`}
	for _, v := range awkwardTexts() {
		values = append(values, v.raw)
	}
	for _, raw := range values {
		for _, moved := range movedSets {
			checkPlainWithRefs(t, json.RawMessage(raw), moved)
		}
	}
}

func FuzzPlainWithRefs(f *testing.F) {
	f.Add([]byte(`"a\n"`), uint8(0))
	f.Add([]byte("\"\xff\n\\n\""), uint8(1))
	f.Fuzz(func(t *testing.T, raw []byte, set uint8) {
		checkPlainWithRefs(t, raw, movedSets[int(set)%len(movedSets)])
	})
}

// An image whose value is not base64 is stored as its text, after the
// decoding that found it out was given up: its file is gone, and the
// store holds the text alone.
func TestPayloadNotBase64IsStoredAsText(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 300))
	for _, tc := range []struct{ name, mime, value, ext string }{
		{"png, fault at the end", "image/png", good + "A", ".png"},
		{"png, fault first", "image/png", "*" + good, ".png"},
		{"unknown binary type", "audio/x-new", good + "==", ".txt"},
		{"base64", "audio/x-new", good, ".bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newSink(t, Options{Store: NewStore(dir), InlineLimit: 100})
			b := frames.Bundle{}
			b.SetText(tc.mime, tc.value)
			b.SetText("text/plain", "<img>")
			s.Frame(frames.Frame{Type: frames.TypeDisplay, ID: "c", Bundle: b})
			d := closeDump(t, s)
			if len(d.Payloads) != 1 {
				t.Fatalf("payloads %+v, notices %q", d.Payloads, d.Notices)
			}
			p := d.Payloads[0]
			want := []byte(tc.value)
			if tc.ext == ".bin" {
				want, _ = base64.StdEncoding.DecodeString(tc.value)
			}
			got, err := os.ReadFile(p.Path)
			if err != nil || !bytes.Equal(got, want) || p.Bytes != int64(len(want)) || !strings.HasSuffix(p.Path, tc.ext) {
				t.Errorf("payload %+v holds %.40q, %v; want %d bytes %.40q in a %s file", p, got, err, len(want), want, tc.ext)
			}
			if files, _ := os.ReadDir(dir); len(files) != 1 {
				t.Errorf("the store holds %d files, want the payload alone", len(files))
			}
		})
	}
}
