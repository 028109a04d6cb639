package streamsink

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"maps"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/heappeak"
)

// bigDisplays are the large display frames a cell can make, as the gateway
// hands them on (the bundle value is the JSON the kernel sent): a text
// without escapes, text of short lines (escaped newlines, which decoding
// must undo), coloured lines that the sanitiser changes (also lines of
// "<", whose new value escaping makes larger), a base64 image that goes
// to the store, and such an image with a large text/plain, which gains a
// line naming the image.
var bigDisplays = []struct {
	name string
	mime string
	raw  func(n int) []byte
	also string // a second entry of the bundle, the value of bigDisplays[also]
}{
	{"text", "text/plain", func(n int) []byte { return jsonString(bytes.Repeat([]byte("y"), n)) }, ""},
	{"lines", "text/plain", func(n int) []byte {
		return jsonString(repeatTo(strings.Repeat("x", 98)+`\n`, n))
	}, ""},
	{"ansi", "text/plain", func(n int) []byte {
		return jsonString(repeatTo(`\u001b[31m`+strings.Repeat("x", 80)+`\u001b[0m\r\n`, n))
	}, ""},
	// Sanitising changes it and json.Marshal escapes "<": its new value
	// is 5.4 times its size.
	{"html", "text/plain", func(n int) []byte {
		return jsonString(repeatTo(`\u001b[1m`+strings.Repeat("<", 98)+`\n`, n))
	}, ""},
	{"png", "image/png", func(n int) []byte {
		bin := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff, 0xfe}, n*3/4/9)
		return jsonString([]byte(base64.StdEncoding.EncodeToString(bin)))
	}, ""},
	{"png+lines", "image/png", nil, "lines"},
}

// bigBundle is the bundle of d with values of about n bytes each.
func bigBundle(name string, n int) frames.Bundle {
	for _, d := range bigDisplays {
		if d.name != name {
			continue
		}
		if d.raw == nil { // the image
			b := bigBundle("png", n)
			maps.Copy(b, bigBundle(d.also, n))
			return b
		}
		return frames.Bundle{d.mime: d.raw(n)}
	}
	panic("no big display " + name)
}

func jsonString(body []byte) []byte {
	out := make([]byte, 0, len(body)+2)
	return append(append(append(out, '"'), body...), '"')
}

// repeatTo repeats unit up to about n bytes.
func repeatTo(unit string, n int) []byte {
	return bytes.Repeat([]byte(unit), max(1, n/len(unit)))
}

// BenchmarkBigDisplayMemory reports heap_x and rss_x: how far the heap and
// the resident set rise while one display frame whose value is n bytes of
// JSON passes through a sink as a session's (default options, a store),
// as multiples of n. The frame itself is not counted: it is made before.
func BenchmarkBigDisplayMemory(b *testing.B) {
	for _, d := range bigDisplays {
		for _, n := range []int{100e6, 200e6} {
			b.Run(fmt.Sprintf("%s/%dMB", d.name, n/1e6), func(b *testing.B) {
				bundle := bigBundle(d.name, n)
				var heapX, rssX float64
				var took time.Duration
				for range b.N {
					h, r, t := displayPeak(b, bundle)
					heapX, rssX, took = max(heapX, h), max(rssX, r), took+t
				}
				b.ReportMetric(heapX, "heap_x")
				b.ReportMetric(rssX, "rss_x")
				b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "frame_ms")
			})
		}
	}
}

// displayPeak passes one display frame with bundle through a new sink,
// and returns the heap's and the resident set's peak rise over the size
// of its values, and how long the frame and the sink's close took.
func displayPeak(b *testing.B, bundle frames.Bundle) (heapX, rssX float64, took time.Duration) {
	b.Helper()
	s, err := New(Options{Store: NewStore(benchDir(b))})
	if err != nil {
		b.Fatal(err)
	}
	f := frames.Frame{Type: frames.TypeDisplay, ID: "big", Bundle: bundle}
	debug.FreeOSMemory()
	rssOK := heappeak.ResetRSSPeak()
	rss0, _ := heappeak.RSSPeak()
	hp := heappeak.Start()
	start := time.Now()
	out := s.Frame(f)
	hp.Sample()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	took = time.Since(start)
	d := s.Dump()
	heap := hp.Stop()
	rss1, _ := heappeak.RSSPeak()
	if !rssOK {
		rss1 = rss0
	}
	if len(out.Bundle) == 0 || d.TotalBytes == 0 && len(d.Payloads) == 0 {
		b.Fatalf("the display did not pass: bundle %d entries, dump %+v", len(out.Bundle), d)
	}
	n := 0.0
	for _, raw := range bundle {
		n += float64(len(raw))
	}
	return float64(heap) / n, float64(rss1-rss0) / n, took
}

// BenchmarkDisplayFrame is the cost of the display frames most cells make,
// small ones, through a sink. It has no store: past the tail, each frame
// would cost the same writes to the artifact whatever the display path.
func BenchmarkDisplayFrame(b *testing.B) {
	table := strings.Repeat(`   a  b    c\n0  1  2.5  x\n`, 40)
	cases := []struct {
		name   string
		typ    frames.Type
		bundle frames.Bundle
	}{
		{"result-2", frames.TypeResult, frames.Bundle{"text/plain": []byte(`"2"`)}},
		{"table", frames.TypeDisplay, frames.Bundle{"text/plain": []byte(`"` + table + `"`),
			"text/html": []byte(`"<table><tr><td>1</td></tr></table>"`)}},
		{"ansi", frames.TypeDisplay, frames.Bundle{"text/plain": []byte(`"\u001b[31mred\u001b[0m and plain\r\n"`)}},
		{"markdown", frames.TypeDisplay, frames.Bundle{"text/plain": []byte(`"<IPython.core.display.Markdown object>"`),
			"text/markdown": []byte(`"# Title\n\nsome *text* caf\u00e9\n"`)}},
		{"png-inline", frames.TypeDisplay, frames.Bundle{"text/plain": []byte(`"<Figure size 640x480 with 1 Axes>"`),
			"image/png": jsonString([]byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1, 2, 3}, 10<<10))))}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := New(Options{})
			defer s.Close()
			f := frames.Frame{Type: tc.typ, ID: "c", Bundle: tc.bundle}
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Frame(f)
			}
		})
	}
}
