package sessions

import "fmt"

// guardMemory recycles an interpreter that grew past the limit.
func (c *cellRun) guardMemory() {
	limit := c.j.reg.cfg.MaxRSS
	if limit <= 0 {
		return
	}
	r, ok := c.j.s.current(c.cell.Language).(rssReporter)
	if !ok {
		return
	}
	if rss, err := r.RSS(); err == nil && rss > limit {
		c.j.s.drop(c.cell.Language, fmt.Sprintf("was recycled: it used %d MB, over the %d MB limit", rss>>20, limit>>20))
		c.res.Recycled = true
		c.lose(false)
		c.notice(fmt.Sprintf("[interpreter used %d MB, over the %d MB limit; it was recycled and its state is gone]\n",
			rss>>20, limit>>20))
	}
}
