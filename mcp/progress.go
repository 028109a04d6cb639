package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// maxProgressLine bounds the output line a progress message quotes.
const maxProgressLine = 200

// collector watches one eval call's frames: which cell runs since when, its
// last output line (for progress), and the images it displayed.
type collector struct {
	store *streamsink.Store
	cells int
	start time.Time

	mu       sync.Mutex
	cell     int // running cell, -1 between cells
	title    string
	since    time.Time
	lastLine string
	partial  string // an unfinished last line
	images   map[int][]imageRef
	changed  chan struct{} // a cell started or ended: send a progress note now
}

func newCollector(store *streamsink.Store, cells int) *collector {
	return &collector{store: store, cells: cells, start: time.Now(), cell: -1,
		images: map[int][]imageRef{}, changed: make(chan struct{}, 1)}
}

// emit sees every frame, after the registry's sink bounded and sanitised it.
func (c *collector) emit(cell int, f frames.Frame) {
	switch f.Type {
	case frames.TypeStarted:
		c.mu.Lock()
		c.cell, c.since, c.lastLine, c.partial = cell, time.Now(), "", ""
		c.mu.Unlock()
		c.poke()
	case frames.TypeStdout, frames.TypeStderr:
		c.mu.Lock()
		c.noteOutput(f.Data)
		c.mu.Unlock()
	case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeResult:
		if ref, ok := inlineImage(c.store, f.Bundle); ok {
			c.mu.Lock()
			c.images[cell] = append(c.images[cell], ref)
			c.mu.Unlock()
		}
		if text := f.Bundle.DisplayText(); text != "" {
			c.mu.Lock()
			c.noteOutput(strings.TrimRight(text, "\n") + "\n")
			c.mu.Unlock()
		}
	}
}

// noteOutput keeps the last non-blank line of the output; c.mu is held.
func (c *collector) noteOutput(data string) {
	text := c.partial + data
	nl := strings.LastIndexAny(text, "\r\n")
	c.partial = text[nl+1:]
	if len(c.partial) > 4*maxProgressLine {
		c.partial = c.partial[len(c.partial)-4*maxProgressLine:]
	}
	lines := strings.FieldsFunc(text[:nl+1], func(r rune) bool { return r == '\n' || r == '\r' })
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			c.lastLine = lines[i]
			break
		}
	}
}

// cellEnd records the images the sink moved to the store (those too large
// to stay inline) and marks that no cell runs.
func (c *collector) cellEnd(res sessions.CellResult) {
	c.mu.Lock()
	for _, p := range res.Output.Payloads {
		if p.MIME == "image/png" || p.MIME == "image/jpeg" {
			c.images[res.Index] = append(c.images[res.Index], imageRef{mime: p.MIME, artifact: p.Artifact, path: p.Path, size: p.Bytes})
		}
	}
	c.cell = -1
	c.mu.Unlock()
	c.poke()
}

func (c *collector) cellImages(i int) []imageRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.images[i]
}

func (c *collector) poke() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// note describes the call's state for a progress notification.
func (c *collector) note(now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cell < 0 {
		return fmt.Sprintf("%.1fs: between cells", now.Sub(c.start).Seconds())
	}
	msg := fmt.Sprintf("cell %d/%d running for %.1fs", c.cell+1, c.cells, now.Sub(c.since).Seconds())
	line := c.lastLine
	if strings.TrimSpace(c.partial) != "" {
		line = c.partial
	}
	if line = strings.TrimSpace(line); line != "" {
		msg += ": " + clip(line, maxProgressLine)
	}
	return msg
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// startProgress sends progress notifications while the call runs, when the
// client asked for them with a progress token. stop returns once the
// sender has finished.
func (s *Server) startProgress(ctx context.Context, req *sdk.CallToolRequest, col *collector) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || s.cfg.Progress < 0 || req.Session == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.cfg.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			case <-col.changed:
			}
			now := time.Now()
			// Progress must grow with every note: the call's elapsed time does.
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
				Progress: now.Sub(col.start).Seconds(), Message: col.note(now)})
		}
	}()
	return func() { close(done); wg.Wait() }
}
