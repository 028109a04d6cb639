package streamsink

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
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
	ext, write := payloadFile(mime, raw)
	var got bytes.Buffer
	n, err := write(&got)
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
