package mcp

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

func imageFrame(t *testing.T, typ frames.Type, id string, w int) frames.Frame {
	b := frames.Bundle{}
	b.SetText("image/png", base64.StdEncoding.EncodeToString(testPNG(t, w, 4, false)))
	return frames.Frame{Type: typ, DisplayID: id, Bundle: b}
}

func TestCollectorImages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames []frames.Frame
		widths []int // of the images the cell shows, in order
	}{
		{"two displays", []frames.Frame{imageFrame(t, frames.TypeDisplay, "", 1), imageFrame(t, frames.TypeResult, "", 2)}, []int{1, 2}},
		{"updated display shows its last state", []frames.Frame{imageFrame(t, frames.TypeDisplay, "d", 1),
			imageFrame(t, frames.TypeDisplay, "", 2), imageFrame(t, frames.TypeUpdateDisplay, "d", 3),
			imageFrame(t, frames.TypeUpdateDisplay, "d", 4)}, []int{4, 2}},
		{"clear_output forgets earlier images", []frames.Frame{imageFrame(t, frames.TypeDisplay, "", 1),
			{Type: frames.TypeClearOutput, Wait: true}, imageFrame(t, frames.TypeDisplay, "", 5)}, []int{5}},
		{"update of an earlier cell's display", []frames.Frame{imageFrame(t, frames.TypeUpdateDisplay, "old", 6)}, []int{6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := newCollector(streamsink.NewStore(dir), 1)
			for _, f := range tc.frames {
				c.emit(0, f)
			}
			c.cellEnd(sessions.CellResult{Index: 0})
			refs := c.cellImages(0)
			if len(refs) != len(tc.widths) {
				t.Fatalf("%d images, want %d", len(refs), len(tc.widths))
			}
			for i, r := range refs {
				data, err := r.bytes()
				if err != nil || r.artifact == "" {
					t.Fatalf("image %d not stored: %+v %v", i, r, err)
				}
				f, err := fitImage(data, r.mime, ImageBudget{}.withDefaults())
				if err != nil || f.width != tc.widths[i] {
					t.Fatalf("image %d is %d wide (%v), want %d", i, f.width, err, tc.widths[i])
				}
			}
			files, _ := os.ReadDir(dir)
			if len(files) != len(tc.widths) {
				t.Fatalf("%d files stored, want one per shown image (%d)", len(files), len(tc.widths))
			}
			if c.held != 0 {
				t.Fatalf("%d bytes still counted as held", c.held)
			}
		})
	}
}

func TestCollectorHoldsBoundedImages(t *testing.T) {
	c := newCollector(streamsink.NewStore(t.TempDir()), 1)
	big := frames.Frame{Type: frames.TypeDisplay, Bundle: frames.Bundle{}}
	data := make([]byte, 5<<20)
	copy(data, testPNG(t, 2, 2, false))
	big.Bundle.SetText("image/png", base64.StdEncoding.EncodeToString(data))
	for range 20 { // 100 MiB of displays
		c.emit(0, big)
		if c.held > maxHeldImageBytes {
			t.Fatalf("%d bytes held, over %d", c.held, maxHeldImageBytes)
		}
	}
}

func TestCollectorNote(t *testing.T) {
	c := newCollector(nil, 2)
	c.emit(1, frames.Frame{Type: frames.TypeStarted})
	c.emit(1, frames.Frame{Type: frames.TypeStdout, Data: "epoch 1\nepoch 2\n\n"})
	c.emit(1, frames.Frame{Type: frames.TypeStdout, Data: "loss 0."})
	c.emit(1, frames.Frame{Type: frames.TypeStdout, Data: "5"})
	if n := c.note(c.start); !strings.Contains(n, "cell 2/2 running for") || !strings.Contains(n, ": loss 0.5") {
		t.Fatalf("note %q", n)
	}
	c.emit(1, frames.Frame{Type: frames.TypeStdout, Data: "\r\n"})
	if n := c.note(c.start); !strings.Contains(n, ": loss 0.5") {
		t.Fatalf("after the line ended, note %q", n)
	}
	c.cellEnd(sessions.CellResult{Index: 1})
	if n := c.note(c.start); !strings.Contains(n, "between cells") {
		t.Fatalf("after the cell, note %q", n)
	}
}

// A warning frame (a display too large to pass, a gateway's note) is in the
// cell's text: the sink keeps no warnings, and the result said nothing of
// a dropped plot. Warnings are bounded in number and length.
func TestRenderEvalShowsWarnings(t *testing.T) {
	srv := newTestServer(t)
	col := newCollector(nil, 1)
	const dropped = "a display frame of 112511865 bytes exceeds the 33554432-byte line limit and was dropped"
	col.emit(0, frames.Frame{Type: frames.TypeWarning, Message: dropped})
	for range 20 {
		col.emit(0, frames.Frame{Type: frames.TypeWarning, Message: strings.Repeat("w", 5000)})
	}
	res, _, err := srv.renderEval(sessions.Result{Status: sessions.StatusOK, FailedCell: -1,
		Cells: []sessions.CellResult{{Index: 0, Language: sessions.LangPython, Status: sessions.StatusOK}}}, col)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.Contains(text, "[warning: "+dropped+"]") {
		t.Fatalf("text %q lacks the warning", text)
	}
	if n := strings.Count(text, "[warning: "); n != maxWarnings+1 || len(text) > (maxWarnings+2)*(maxWarningBytes+100) ||
		!strings.Contains(text, "more warnings were left out") {
		t.Fatalf("%d warnings in %d bytes; want %d and a note of the rest, each bounded", n, len(text), maxWarnings)
	}
}

// The sink's line for an image it stored is dropped from the text: the
// image's own line says more, and the two, with two sizes, read as two
// images. Other lines, even alike, stay.
func TestWithoutPayloadLines(t *testing.T) {
	images := []imageRef{{mime: "image/png", artifact: "artifact://4.png"}}
	body := "<IPython.core.display.Image object>\n[image/png 486.1 KiB: artifact://4.png]\n[image/png 1000 B: artifact://5.png]\nend"
	want := "<IPython.core.display.Image object>\n[image/png 1000 B: artifact://5.png]\nend"
	if got := withoutPayloadLines(body, images); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// A display an MCP client cannot be shown as image content (a matplotlib
// figure under --ipython's %config InlineBackend.figure_format 'svg' or
// 'pdf') is stored and linked, and the text says so: the result had
// "<Figure size 640x480 with 1 Axes>" and nothing else. A bundle with a PNG
// as well shows the PNG only.
func TestRenderEvalLinksSVGAndPDF(t *testing.T) {
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`
	pdf := "%PDF-1.4\n%%EOF\n"
	bundle := func(kv ...string) frames.Bundle {
		b := frames.Bundle{}
		for i := 0; i < len(kv); i += 2 {
			b.SetText(kv[i], kv[i+1])
		}
		return b
	}
	png := base64.StdEncoding.EncodeToString(testPNG(t, 3, 3, false))
	for _, tc := range []struct {
		name   string
		bundle frames.Bundle
		mime   string
		data   string // the stored file's
		line   string // in the cell's text
	}{
		{"svg", bundle("image/svg+xml", svg, "text/plain", "<Figure>"), "image/svg+xml", svg,
			"[image/svg+xml 62 B: not shown: MCP image content is PNG or JPEG, the link has the image/svg+xml; full size: artifact://1.svg]"},
		{"pdf", bundle("application/pdf", base64.StdEncoding.EncodeToString([]byte(pdf))), "application/pdf", pdf,
			"[application/pdf 15 B: not shown: MCP image content is PNG or JPEG, the link has the application/pdf; full size: artifact://1.pdf]"},
		{"png beside svg", bundle("image/png", png, "image/svg+xml", svg), "image/png", "", "[image/png "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t)
			col := newCollector(streamsink.NewStore(t.TempDir()), 1)
			col.emit(0, frames.Frame{Type: frames.TypeDisplay, Bundle: tc.bundle})
			col.cellEnd(sessions.CellResult{Index: 0})
			res, out, err := srv.renderEval(sessions.Result{Status: sessions.StatusOK, FailedCell: -1,
				Cells: []sessions.CellResult{{Index: 0, Language: sessions.LangPython, Status: sessions.StatusOK}}}, col)
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if !strings.Contains(text, tc.line) {
				t.Fatalf("text %q, want a line %q", text, tc.line)
			}
			if imgs := out.Cells[0].Images; len(imgs) != 1 || imgs[0].MIME != tc.mime {
				t.Fatalf("images %+v, want one %s", imgs, tc.mime)
			}
			var link *sdk.ResourceLink
			for _, c := range res.Content {
				if l, ok := c.(*sdk.ResourceLink); ok {
					link = l
				}
			}
			if link == nil || link.MIMEType != tc.mime {
				t.Fatalf("content %+v, want a link to the %s", res.Content, tc.mime)
			}
			if tc.data != "" {
				ref := col.cellImages(0)[0]
				if b, err := os.ReadFile(ref.path); err != nil || string(b) != tc.data {
					t.Fatalf("stored %q (%v), want %q", b, err, tc.data)
				}
			}
		})
	}
}

// A display's text in progress notes is the sink's: HTML as text, an
// escape sequence removed whole, not left as "]52;c;..." when only its
// control bytes went.
func TestCollectorDisplayTextIsSanitised(t *testing.T) {
	c := newCollector(nil, 1)
	b := frames.Bundle{}
	b.SetText("text/html", "<b>a\x1b]52;c;aGk=\x07b</b> &#27;[2Jc")
	c.emit(0, frames.Frame{Type: frames.TypeStarted})
	c.emit(0, frames.Frame{Type: frames.TypeDisplay, Bundle: b})
	c.mu.Lock()
	got := c.lastLine
	c.mu.Unlock()
	if got != "ab c" {
		t.Errorf("last line %q, want %q", got, "ab c")
	}
}
