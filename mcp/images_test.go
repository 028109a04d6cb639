package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// testPNG is a w x h image: flat (compresses well) or noise (does not).
func testPNG(t *testing.T, w, h int, noise bool) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			c := color.RGBA{uint8(x), uint8(y), 128, 255}
			if noise {
				c = color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFitImage(t *testing.T) {
	budget := ImageBudget{}.withDefaults()
	for _, tc := range []struct {
		name       string
		w, h       int
		noise      bool
		budget     ImageBudget
		wantSame   bool
		wantNote   string
		wantMaxDim int
	}{
		{"small stays as is", 640, 480, false, budget, true, "shown as is", 640},
		{"wide is downscaled", 3000, 1000, false, budget, false, "downscaled from 3000x1000", budget.MaxSide},
		{"tall is downscaled", 500, 2000, false, budget, false, "downscaled from 500x2000", budget.MaxSide},
		{"heavy is re-encoded", 1000, 1000, true, ImageBudget{MaxSide: 1568, MaxBytes: 200 << 10}, false, "re-encoded as jpeg", 1000},
		{"very heavy shrinks too", 1500, 1500, true, ImageBudget{MaxSide: 1568, MaxBytes: 60 << 10}, false, "downscaled from 1500x1500", 1500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := testPNG(t, tc.w, tc.h, tc.noise)
			f, err := fitImage(data, "image/png", tc.budget.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantSame != bytes.Equal(f.data, data) || !strings.Contains(f.note, tc.wantNote) {
				t.Fatalf("same=%v note %q; want same=%v, note with %q", bytes.Equal(f.data, data), f.note, tc.wantSame, tc.wantNote)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(f.data))
			if err != nil || "image/"+format != f.mime || cfg.Width != f.width || cfg.Height != f.height {
				t.Fatalf("result is %s %dx%d (%v), says %s %dx%d", format, cfg.Width, cfg.Height, err, f.mime, f.width, f.height)
			}
			if max(cfg.Width, cfg.Height) > min(tc.wantMaxDim, tc.budget.withDefaults().MaxSide) || len(f.data) > tc.budget.withDefaults().MaxBytes {
				t.Fatalf("result %dx%d, %d bytes: over the budget", cfg.Width, cfg.Height, len(f.data))
			}
		})
	}
}

func TestFitImageRefuses(t *testing.T) {
	if _, err := fitImage([]byte("not an image"), "image/png", ImageBudget{}.withDefaults()); err == nil {
		t.Fatal("garbage was fitted")
	}
}

func TestInlineImageIsStored(t *testing.T) {
	store := streamsink.NewStore(t.TempDir())
	data := testPNG(t, 10, 10, false)
	b := frames.Bundle{}
	b.SetText("image/png", base64.StdEncoding.EncodeToString(data))
	b.SetText("text/plain", "<Figure>")
	ref, ok, _ := inlineImage(b)
	if !ok || ref.size != int64(len(data)) {
		t.Fatalf("ref %+v ok=%v", ref, ok)
	}
	storeImage(store, &ref)
	if !strings.HasPrefix(ref.artifact, "artifact://") {
		t.Fatalf("stored ref %+v", ref)
	}
	stored, err := os.ReadFile(ref.path)
	if err != nil || !bytes.Equal(stored, data) {
		t.Fatalf("stored image differs (%v)", err)
	}
	if _, ok, _ := inlineImage(frames.Bundle{"text/plain": []byte(`"x"`)}); ok {
		t.Fatal("a text-only display became an image")
	}
}

// pngHeader is a PNG that is only its IHDR: enough for DecodeConfig, so
// fitImage's bounds are tested without building the pixels.
func pngHeader(w, h uint32, depth, colorType byte) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, depth, colorType, 0, 0, 0)
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// An image is decoded only when its pixels fit in memory: a 16-bit RGBA
// PNG of 5000x5000 (200 MB decoded, ~400 KB of zeros on disk) was decoded,
// and 8000x8000 took 900 MB and 10 s.
func TestFitImageRefusesBombs(t *testing.T) {
	for _, tc := range []struct {
		name             string
		w, h             uint32
		depth, colorType byte
	}{
		{"16-bit RGBA", 5000, 5000, 16, 6},
		{"8-bit RGBA", 7000, 7000, 8, 6},
		{"huge header", 100000, 100000, 8, 6},
		{"many gray pixels", 8000, 6000, 8, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fitImage(pngHeader(tc.w, tc.h, tc.depth, tc.colorType), "image/png", ImageBudget{}.withDefaults())
			if !errors.Is(err, errTooLarge) {
				t.Fatalf("fitImage = %v; want %v", err, errTooLarge)
			}
		})
	}
}

// A progressive JPEG keeps 4 bytes of coefficients per pixel and component
// while it decodes: a flat 6000x6000 one (a few hundred KB) took 515 MiB.
// The test needs only its header: SOI, JFIF, a progressive SOF2 frame.
func TestFitImageRefusesProgressiveJPEGBombs(t *testing.T) {
	jfif := []byte{0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0}
	sof2 := []byte{0xFF, 0xC2, 0, 17, 8, 6000 >> 8, 6000 & 0xFF, 6000 >> 8, 6000 & 0xFF, 3,
		1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1}
	data := append(append([]byte{0xFF, 0xD8}, jfif...), sof2...)
	if _, err := fitImage(data, "image/jpeg", ImageBudget{}.withDefaults()); !errors.Is(err, errTooLarge) {
		t.Fatalf("fitImage = %v; want %v", err, errTooLarge)
	}
}

// A refusal says the image's size once decoded, past 2 GiB too (it was cut
// to a 32-bit int there), and on 32-bit platforms an image whose pixels
// overflow an int (image/png refuses it) is too large, not unreadable.
func TestFitImageSaysHowLarge(t *testing.T) {
	progressive := func(side int) []byte {
		jfif := []byte{0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0}
		sof2 := []byte{0xFF, 0xC2, 0, 17, 8, byte(side >> 8), byte(side), byte(side >> 8), byte(side), 3,
			1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1}
		return append(append([]byte{0xFF, 0xD8}, jfif...), sof2...)
	}
	for _, tc := range []struct {
		name, mime string
		data       []byte
		want       string // what the error says on a 64-bit platform
		want32     string // and on a 32-bit one
	}{
		{"under 2 GiB", "image/jpeg", progressive(6000), "6000x6000, 549.3 MiB once decoded: too large to decode", ""},
		{"past 2 GiB", "image/jpeg", progressive(12000), "12000x12000, 2197.3 MiB once decoded: too large to decode", ""},
		{"past a 32-bit int's pixels", "image/png", pngHeader(100000, 100000, 8, 6),
			"100000x100000, 38147.0 MiB once decoded: too large to decode",
			"more pixels than a 32-bit platform decodes: too large to decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if tc.want32 != "" && strconv.IntSize == 32 {
				want = tc.want32
			}
			if _, err := fitImage(tc.data, tc.mime, ImageBudget{}.withDefaults()); err == nil || err.Error() != want {
				t.Fatalf("fitImage = %v; want %q", err, want)
			}
		})
	}
}

// A display whose image is not base64 (a data: URI, a common slip) is not
// shown, and the cell's result says so: it was dropped without a word,
// while one whose bytes are no readable image gets a line and a link.
func TestUndecodableImageIsSaid(t *testing.T) {
	session, _ := connect(t, nil)
	code := "from IPython.display import display\n" +
		"display({'image/png': 'data:image/png;base64,iVBORw0KGgo='}, raw=True)"
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "eval",
		Arguments: map[string]any{"cells": []any{map[string]any{"code": code}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "[warning: a display's image/png is not base64 (illegal base64 data at input byte 4), so it is not shown]"
	if got := textOf(res); res.IsError || !strings.Contains(got, want) {
		t.Fatalf("isError=%v, %q; want a line %q", res.IsError, got, want)
	}
}
