package mcp

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	warnings map[int][]string // what the interpreter or host said about a cell besides its output
	held     int64            // bytes of images in memory, not yet stored
	changed  chan struct{}    // a cell started or ended: send a progress note now
}

func newCollector(store *streamsink.Store, cells int) *collector {
	return &collector{store: store, cells: cells, start: time.Now(), cell: -1,
		images: map[int][]imageRef{}, warnings: map[int][]string{}, changed: make(chan struct{}, 1)}
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
		ref, ok, bad := inlineImage(f.Bundle)
		switch {
		case ok:
			ref.display = f.DisplayID
			c.mu.Lock()
			c.addImage(cell, ref)
			c.mu.Unlock()
		case bad != nil:
			// Its text, if any, stands; without this line nothing
			// said that an image was there.
			c.mu.Lock()
			c.addWarning(cell, bad.Error())
			c.mu.Unlock()
		}
		if text := streamsink.DisplayText(f.Bundle); text != "" {
			c.mu.Lock()
			c.noteOutput(strings.TrimRight(text, "\n") + "\n")
			c.mu.Unlock()
		}
	case frames.TypeWarning:
		// Not in the sink's output: a dropped display, a gateway's note. A
		// result without it would lose what happened without a word.
		c.mu.Lock()
		c.addWarning(cell, f.Message)
		c.mu.Unlock()
	case frames.TypeClearOutput:
		// Jupyter empties the cell's output area: its images so far are gone
		// (the sink's large ones join at the cell's end, so none is here).
		c.mu.Lock()
		for _, r := range c.images[cell] {
			c.release(r)
		}
		c.images[cell] = nil
		c.mu.Unlock()
	}
}

// Bounds of the warnings a cell's result carries.
const (
	maxWarnings     = 8
	maxWarningBytes = 1000
)

// addWarning keeps a cell's warning, bounded in number and length; c.mu
// is held.
func (c *collector) addWarning(cell int, msg string) {
	ws := c.warnings[cell]
	switch {
	case len(ws) < maxWarnings:
		if len(msg) > maxWarningBytes {
			cut := maxWarningBytes
			for cut > 0 && !utf8.RuneStart(msg[cut]) {
				cut--
			}
			msg = msg[:cut] + "…"
		}
		c.warnings[cell] = append(ws, msg)
	case len(ws) == maxWarnings:
		c.warnings[cell] = append(ws, "(more warnings were left out)")
	}
}

func (c *collector) cellWarnings(i int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.warnings[i]
}

// maxHeldImageBytes bounds the images a call keeps in memory until their
// cell ends; past it the oldest are stored at once.
const maxHeldImageBytes = 32 << 20

// addImage adds a displayed image, or replaces the one of the cell with the
// same display id (an updated display shows its last state). Images are
// stored when the cell ends, so a display updated in a loop, or cleared and
// drawn again, is written once; c.mu is held.
func (c *collector) addImage(cell int, ref imageRef) {
	c.held += ref.size
	replaced := false
	if ref.display != "" {
		for i, old := range c.images[cell] {
			if old.display == ref.display {
				c.release(old)
				c.images[cell][i], replaced = ref, true
				break
			}
		}
	}
	if !replaced {
		c.images[cell] = append(c.images[cell], ref)
	}
	for i := range c.images[cell] {
		if c.held <= maxHeldImageBytes {
			break
		}
		r := &c.images[cell][i]
		if r.data == nil || r.artifact != "" {
			continue
		}
		c.release(*r)
		storeImage(c.store, r)
		r.data = nil // its file has it; unstored, it is dropped to bound memory
		if r.artifact == "" && r.saveErr == nil {
			r.saveErr = errNotKept
		}
	}
}

var errNotKept = errors.New("not kept: no artifact store, and the call's images passed 32 MiB")

// release forgets an image's bytes held in memory; c.mu is held.
func (c *collector) release(r imageRef) {
	if r.data != nil && r.artifact == "" {
		c.held -= r.size
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
	for i := range c.images[res.Index] {
		r := &c.images[res.Index][i]
		c.release(*r)
		storeImage(c.store, r)
	}
	for _, p := range res.Output.Payloads {
		if imageExt[p.MIME] != "" {
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
