package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// A PDF display (a figure under --ipython with
// %config InlineBackend.figure_format = 'pdf') is saved as an image is:
// only its text/plain was shown, so the PDF was lost without a word.
func TestRunSavesPDFDisplays(t *testing.T) {
	pdf := []byte("%PDF-1.4 a figure")
	var out, errs bytes.Buffer
	h := newHumanRenderer(&out, &errs, t.TempDir(), false)
	h.frame(1, frames.Frame{Type: frames.TypeDisplay, Bundle: frames.Bundle{
		"application/pdf": []byte(`"` + base64.StdEncoding.EncodeToString(pdf) + `"`),
		"text/plain":      []byte(`"<Figure size 640x480 with 1 Axes>"`),
	}})
	path, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "[application/pdf saved to ")
	if !ok || errs.Len() > 0 {
		t.Fatalf("stdout %q, stderr %q; want the PDF saved", out.String(), errs.String())
	}
	path = strings.TrimSuffix(path, "]")
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, pdf) || !strings.HasSuffix(path, ".pdf") {
		t.Errorf("%s: %q, %v", path, b, err)
	}
}
