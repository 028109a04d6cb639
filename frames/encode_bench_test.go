package frames

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkAppendJSONBigDisplay encodes a decoded display whose value is a
// large base64 image, as serve hands one on.
func BenchmarkAppendJSONBigDisplay(b *testing.B) {
	for _, n := range []int{1 << 20, 100 << 20} {
		b.Run(fmt.Sprintf("%dMB", n>>20), func(b *testing.B) {
			img := strings.Repeat("iVBORw0KGgo=", n/12)
			f, err := Decode([]byte(`{"type":"display","id":"c","bundle":{"image/png":"` + img + `","text/plain":"<img>"}}`))
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, n+1024)
			b.SetBytes(int64(n))
			for b.Loop() {
				buf = AppendJSON(buf[:0], &f)
			}
		})
	}
}

// BenchmarkDecodeBigDisplay decodes a display line whose value is a large
// base64 image: its B/op is what a frame of that size costs beside the line.
func BenchmarkDecodeBigDisplay(b *testing.B) {
	n := 100 << 20
	line := []byte(`{"type":"display","id":"c","bundle":{"image/png":"` + strings.Repeat("iVBORw0KGgo=", n/12) + `","text/plain":"<img>"},"metadata":{}}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}
