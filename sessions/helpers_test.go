package sessions

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/evalhost/evalhost/frames"
)

func fmtSscan(s string, a ...any) (int, error) { return fmt.Sscan(s, a...) }

func quote(s string) string { return strconv.Quote(s) }

func sortDurations(d []time.Duration) { slices.Sort(d) }

func (c *collector) all() []frames.Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.frames)
}

func (c *collector) first(t frames.Type) *frames.Frame {
	for _, f := range c.all() {
		if f.Type == t {
			return &f
		}
	}
	return nil
}
