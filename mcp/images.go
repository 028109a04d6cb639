package mcp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"strings"

	"golang.org/x/image/draw"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// Image budget defaults: the long side Claude's vision models use without
// scaling, and a byte size a client can forward to any model API.
const (
	DefaultImageSide   = 1568
	DefaultImageBytes  = 512 << 10
	DefaultImageCount  = 8
	maxDecodePixels    = 40 << 20  // larger images are linked, never decoded
	maxDecodeBytes     = 160 << 20 // nor are those whose pixels take more memory
	minDownscaleSide   = 64
	jpegQualityFirst   = 85
	jpegQualityLast    = 55
	downscaleStepRatio = 0.7
)

// ImageBudget bounds the images a result carries as image content. An
// image outside it is downscaled and re-encoded until it fits; the full
// image is always a resource link.
type ImageBudget struct {
	MaxSide  int // pixels on the long side; default 1568
	MaxBytes int // encoded bytes; default 512 KiB
	MaxCount int // images shown per call; the rest are links only; default 8
}

func (b ImageBudget) withDefaults() ImageBudget {
	if b.MaxSide <= 0 {
		b.MaxSide = DefaultImageSide
	}
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultImageBytes
	}
	if b.MaxCount <= 0 {
		b.MaxCount = DefaultImageCount
	}
	return b
}

// imageRef is an image a cell displayed: its bytes are in the store (path),
// or only in memory (data) when no store could keep it.
type imageRef struct {
	mime     string
	artifact string // "artifact://12.png"; "" when not stored
	path     string
	data     []byte
	size     int64
	saveErr  error
	display  string // the display id, when the display has one
}

func (r imageRef) bytes() ([]byte, error) {
	if r.data != nil {
		return r.data, nil
	}
	if r.path == "" {
		return nil, r.saveErr
	}
	return os.ReadFile(r.path)
}

// imageExt names the stored file of each image type a result carries: PNG
// and JPEG are shown (image content reaches models that read those), SVG
// and PDF only linked, so that a figure under --ipython's %config
// InlineBackend.figure_format 'svg' or 'pdf' is not lost.
var imageExt = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg", "application/pdf": "pdf"}

func shownType(mime string) bool { return mime == "image/png" || mime == "image/jpeg" }

// inlineImage decodes a display's inline PNG or JPEG, else its SVG or PDF;
// storeImage saves it once the cell ends (a display updated many times is
// stored once). bad says why an image it holds is not one: its PNG, JPEG
// or PDF is not base64.
func inlineImage(b frames.Bundle) (ref imageRef, ok bool, bad error) {
	for _, mime := range []string{"image/png", "image/jpeg", "image/svg+xml", "application/pdf"} {
		text, ok := b.Text(mime)
		if !ok {
			continue
		}
		if mime == "image/svg+xml" { // text, as Jupyter keeps it
			return imageRef{mime: mime, data: []byte(text), size: int64(len(text))}, true, nil
		}
		data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text), ""))
		if err != nil {
			return imageRef{}, false, fmt.Errorf("a display's %s is not base64 (%w), so it is not shown", mime, err)
		}
		return imageRef{mime: mime, data: data, size: int64(len(data))}, true, nil
	}
	return imageRef{}, false, nil
}

// storeImage saves an inline image to the store, so that even a small plot
// has a full-size resource.
func storeImage(store *streamsink.Store, ref *imageRef) {
	if store == nil || ref.artifact != "" || ref.data == nil {
		return
	}
	id, path, err := store.WriteFile(imageExt[ref.mime], ref.data)
	if err != nil {
		ref.saveErr = err
		return
	}
	ref.artifact, ref.path = streamsink.Scheme+id, path
}

// fitted is an image made to fit a budget.
type fitted struct {
	data          []byte
	mime          string
	width, height int // as shown
	origW, origH  int
	note          string // what was done, for the text
}

var errTooLarge = errors.New("too large to decode")

// decodedBytes is the memory image.Decode takes for an image of cfg: a
// 16-bit RGBA PNG holds 8 bytes a pixel, so a few hundred KB of zeros can
// ask for gigabytes, and a progressive JPEG keeps every component's
// coefficients as int32s besides (a 420 KB 6000x6000 one took 515 MiB).
func decodedBytes(cfg image.Config, data []byte) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	// SOF2 starts a progressive frame; entropy-coded data escapes 0xFF,
	// so the pair is found only as that marker.
	if bytes.HasPrefix(data, []byte{0xFF, 0xD8}) && bytes.Contains(data, []byte{0xFF, 0xC2}) {
		return px * 16
	}
	switch cfg.ColorModel {
	case color.RGBA64Model, color.NRGBA64Model:
		return px * 8
	case color.Gray16Model:
		return px * 2
	case color.GrayModel, color.AlphaModel:
		return px
	}
	if _, ok := cfg.ColorModel.(color.Palette); ok {
		return px
	}
	return px * 4 // RGBA, NRGBA, YCbCr (at most 3), CMYK
}

// fitImage returns data unchanged when it fits the budget; otherwise it
// downscales (Catmull-Rom, golang.org/x/image/draw) to MaxSide and
// re-encodes (PNG, then JPEG at falling quality, then smaller) until it
// fits MaxBytes.
func fitImage(data []byte, mime string, b ImageBudget) (fitted, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err == png.UnsupportedError("dimension overflow") { // only where an int has 32 bits
		return fitted{}, fmt.Errorf("more pixels than a 32-bit platform decodes: %w", errTooLarge)
	}
	if err != nil {
		return fitted{}, fmt.Errorf("not a readable %s: %w", mime, err)
	}
	f := fitted{data: data, mime: "image/" + format, width: cfg.Width, height: cfg.Height, origW: cfg.Width, origH: cfg.Height}
	long := max(cfg.Width, cfg.Height)
	if long <= b.MaxSide && len(data) <= b.MaxBytes {
		f.note = "shown as is"
		return f, nil
	}
	if need := decodedBytes(cfg, data); int64(cfg.Width)*int64(cfg.Height) > maxDecodePixels || need > maxDecodeBytes {
		return fitted{}, fmt.Errorf("%dx%d, %s once decoded: %w", cfg.Width, cfg.Height, humanSize(need), errTooLarge)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return fitted{}, fmt.Errorf("not a readable %s: %w", mime, err)
	}
	scale := min(1, float64(b.MaxSide)/float64(long))
	tryPNG := format != "jpeg" // a photo stays a JPEG
	for {
		w, h := max(1, int(float64(cfg.Width)*scale+0.5)), max(1, int(float64(cfg.Height)*scale+0.5))
		small := img
		if scale < 1 {
			small = resize(img, w, h)
		}
		out, m, pngSize, ok := encodeWithin(small, b.MaxBytes, tryPNG)
		// A PNG far over the budget will not fit at a somewhat smaller
		// scale either; encoding it again only costs time.
		tryPNG = tryPNG && pngSize <= 2*b.MaxBytes
		if ok {
			f.data, f.mime, f.width, f.height = out, m, w, h
			f.note = describeFit(f, len(data))
			return f, nil
		}
		scale *= downscaleStepRatio
		if max(w, h) < minDownscaleSide {
			return fitted{}, fmt.Errorf("cannot fit %dx%d into %d bytes", cfg.Width, cfg.Height, b.MaxBytes)
		}
	}
}

func resize(src image.Image, w, h int) image.Image {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

// encodeWithin tries PNG (lossless, best for plots) when asked, then JPEG
// at falling quality over a white background (JPEG has no alpha). It
// returns the PNG's size too.
func encodeWithin(img image.Image, limit int, tryPNG bool) (data []byte, mime string, pngSize int, ok bool) {
	var buf bytes.Buffer
	if tryPNG {
		if err := png.Encode(&buf, img); err == nil && buf.Len() <= limit {
			return buf.Bytes(), "image/png", buf.Len(), true
		}
		pngSize = buf.Len()
	}
	flat := onWhite(img)
	for q := jpegQualityFirst; q >= jpegQualityLast; q -= 15 {
		buf.Reset()
		if err := jpeg.Encode(&buf, flat, &jpeg.Options{Quality: q}); err == nil && buf.Len() <= limit {
			return buf.Bytes(), "image/jpeg", pngSize, true
		}
	}
	return nil, "", pngSize, false
}

func onWhite(img image.Image) image.Image {
	b := img.Bounds()
	dst := image.NewRGBA(b)
	draw.Draw(dst, b, &image.Uniform{C: color.White}, image.Point{}, draw.Src)
	draw.Draw(dst, b, img, b.Min, draw.Over)
	return dst
}

func describeFit(f fitted, origBytes int) string {
	var parts []string
	if f.width != f.origW || f.height != f.origH {
		parts = append(parts, fmt.Sprintf("downscaled from %dx%d", f.origW, f.origH))
	}
	parts = append(parts, fmt.Sprintf("re-encoded as %s (%s, was %s)", strings.TrimPrefix(f.mime, "image/"),
		humanSize(int64(len(f.data))), humanSize(int64(origBytes))))
	return strings.Join(parts, ", ")
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
