package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseArtifactURI(t *testing.T) {
	for _, tc := range []struct {
		uri     string
		want    artifactRef
		wantErr string
	}{
		{"artifact://7.eval.log", artifactRef{id: "7.eval.log"}, ""},
		{"artifact://7.eval.log?offset=10", artifactRef{id: "7.eval.log", offset: 10}, ""},
		{"artifact://7.eval.log?offset=10&length=5", artifactRef{id: "7.eval.log", offset: 10, length: 5}, ""},
		{"artifact://7.eval.log?offset=-1", artifactRef{}, "offset"},
		{"artifact://7.eval.log?length=x", artifactRef{}, "length"},
		{"artifact://7.eval.log?%zz", artifactRef{}, "bad query"},
		{"artifact://7.eval.log?offset=" + strings.Repeat("9", 100<<10), artifactRef{}, "offset"},
		{"artifact://7.eval.log?%zz" + strings.Repeat("x", 100<<10), artifactRef{}, "bad query"},
	} {
		got, err := parseArtifactURI(tc.uri)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one naming %q", tc.uri, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %+v (%v), want %+v", tc.uri, got, err, tc.want)
		case err != nil && len(err.Error()) > 1024:
			t.Errorf("%.60s…: a %d-byte error; a URI it repeats must be clipped", tc.uri, len(err.Error()))
		}
	}
}

func FuzzParseArtifactURI(f *testing.F) {
	f.Add("artifact://1.eval.log?offset=3&length=4")
	f.Fuzz(func(t *testing.T, uri string) {
		ref, err := parseArtifactURI(uri)
		if err == nil && (ref.offset < 0 || ref.length < 0) {
			t.Fatalf("%q: negative range %+v", uri, ref)
		}
	})
}

// TestReadTextPage reads a file larger than one page in parts and checks
// they join to the file, each fits a reply, and the last names no next.
func TestReadTextPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "1.eval.log")
	var b strings.Builder
	for i := 0; b.Len() < MaxResourceBytes*5/2; i++ {
		fmt.Fprintf(&b, "line %d \x1b[31m\"quoted\"\\ é\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var joined strings.Builder
	ref := artifactRef{id: "1.eval.log"}
	for parts := 0; ; parts++ {
		if parts > 10 {
			t.Fatal("too many parts")
		}
		page, err := readTextPage(f, int64(b.Len()), ref)
		if err != nil {
			t.Fatal(err)
		}
		if enc, _ := json.Marshal(page); len(enc) > MaxResourceBytes {
			t.Fatalf("part %d encodes to %d bytes, over %d", parts, len(enc), MaxResourceBytes)
		}
		body, next, found := strings.Cut(page, "\n[part of artifact://1.eval.log: bytes ")
		joined.WriteString(body)
		if !found {
			break
		}
		_, off, _ := strings.Cut(next, "?offset=")
		fmt.Sscanf(off, "%d]", &ref.offset)
		if !utf8.ValidString(body) || !strings.HasSuffix(body, "\n") {
			t.Fatalf("part %d is not cut after a line", parts)
		}
	}
	if joined.String() != b.String() {
		t.Fatalf("parts join to %d bytes, want %d", joined.Len(), b.Len())
	}
	if _, err := readTextPage(f, int64(b.Len()), artifactRef{id: "1.eval.log", offset: int64(b.Len()) + 1}); err == nil {
		t.Fatal("an offset past the end was read")
	}
}
