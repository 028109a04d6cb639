package streamsink

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"testing"
)

// BenchmarkSavePayload stores a base64 image display value, as moveLarge
// does one above the inline limit: decoded into a file of the store.
func BenchmarkSavePayload(b *testing.B) {
	for _, n := range []int{1 << 20, 32 << 20} {
		b.Run(fmt.Sprintf("png/%dMB", n>>20), func(b *testing.B) {
			bin := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff, 0xfe}, n*3/4/9)
			raw := jsonString([]byte(base64.StdEncoding.EncodeToString(bin)))
			s, err := New(Options{Store: NewStore(benchDir(b))})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				p, err := s.savePayload("image/png", raw)
				if err != nil {
					b.Fatal(err)
				}
				os.Remove(p.Path)
			}
		})
	}
}
