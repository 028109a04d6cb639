package gateway

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// TestTranslateGolden feeds recorded-shape Jupyter messages through the
// decoder and translator and compares the frames (or errors) with
// testdata/translate.golden.
func TestTranslateGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(in))
	for sc.Scan() {
		m, err := decodeMessage(bytes.Clone(sc.Bytes()))
		if err != nil {
			out.WriteString("decode error: " + err.Error() + "\n")
			continue
		}
		f, ok, err := translate("cell-1", m)
		switch {
		case err != nil:
			out.WriteString("translate error: " + err.Error() + "\n")
		case !ok:
			out.WriteString("not output: " + m.Header.MsgType + "\n")
		default:
			out.Write(frames.AppendJSON(nil, &f))
			out.WriteByte('\n')
		}
	}
	testkit.Golden(t, filepath.Join("testdata", "translate.golden"), out.Bytes())
}

// FuzzDecodeTranslate: no message, however malformed, panics the reader's
// path, and every translated frame encodes and decodes again.
func FuzzDecodeTranslate(f *testing.F) {
	if in, err := os.ReadFile(filepath.Join("testdata", "messages.jsonl")); err == nil {
		for _, line := range bytes.Split(in, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := decodeMessage(bytes.Clone(raw)) // it decodes a stream's text in place
		if err != nil {
			return
		}
		_ = deathState(m)
		fr, ok, err := translate("id", m)
		if err != nil || !ok {
			return
		}
		line := frames.AppendJSON(nil, &fr)
		back, err := frames.Decode(line)
		if err != nil {
			t.Fatalf("translated frame %s does not decode: %v", line, err)
		}
		if back.Type != fr.Type || back.ID != "id" {
			t.Fatalf("round trip changed the frame: %+v -> %+v", fr, back)
		}
	})
}

func TestSnippetLiterals(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "abc", `"abc"`},
		{"quotes and backslash", `a"b\c`, `"a\"b\\c"`},
		{"control and unicode", "\x1e\n\u00e9", `"\u001e\n` + "\u00e9" + `"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := pyString(tc.in); got != tc.want {
				t.Errorf("pyString(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	if setupCode("", nil) != "" {
		t.Error("setupCode with nothing to apply is not empty")
	}
}
