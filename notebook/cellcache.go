package notebook

import "bytes"

// cellCache keeps each cell's JSON text as the notebook last encoded it, so
// that encoding a notebook in which few cells changed (nb run saves after
// every cell) costs those cells and a copy of the rest, not an encoding of
// every cell. Cells are immutable values (edits copy on write), so a cell
// pointer names its content: an entry is valid while the notebook holds
// that pointer, and a changed cell is a pointer the cache has not seen. The
// entry holds the pointer, so its address is not reused for another cell.
type cellCache struct {
	entries []cachedCell // the cells as last encoded, in order
	spare   []cachedCell // the previous entries' array, reused by the next encoding
	wrote   bool         // the encoding under way wrote the cells into spare
	buf     []byte       // the last encoding, which the entries point into
}

type cachedCell struct {
	cell *value
	// enc is the cell's text at depth 2 in the notebook's layout, without
	// the line break before it, in the cache's buf.
	enc        []byte
	start, end int // enc's offsets while the buffer grows
}

// movedAfter is how many cells in one encoding may miss the cache at their
// own index before it looks them up by pointer: an edit changes a few
// cells in place, while an insert, delete or apply of text moves them.
const movedAfter = 8

// encode returns the notebook's JSON, encoding only the cells that changed
// since the last encoding. The buffer is the notebook's: the cache points
// into it and a save's check compares the file with it, so it is never
// changed, and never handed out (Bytes copies it).
//
// Buffers are recycled: an encoding that neither the cache nor the last
// save's check uses any more is the next one's buffer. A run's saves then
// allocate no buffer of the file's size each, and the garbage collector,
// which scans every cell's values, runs less often (a third of a save's
// cost on a 3,000-cell notebook).
func (nb *Notebook) encode() []byte {
	root := nb.syncedRoot()
	buf := nb.free
	if cap(buf) < nb.size {
		buf = make([]byte, 0, nb.size+nb.size/8+4096)
	}
	nb.free = nil
	e := encoder{indent: nb.layout.indent, newline: nb.layout.newline, buf: buf, cells: root.get("cells"), cache: &nb.cache}
	e.value(root, 0)
	if nb.layout.finalNewline {
		e.buf = append(e.buf, nb.layout.newline...)
	}
	if nb.unedited() && string(e.buf) != nb.src {
		// A layout the encoder does not write (short arrays on one line):
		// the unedited notebook is the file as read, and no cell's text
		// is cached, since it is not the encoder's.
		e.buf = append(e.buf[:0], nb.src...)
		nb.cache.wrote = false
	}
	old := nb.cache.buf
	nb.cache.finish(e.buf)
	nb.release(old)
	nb.size = len(e.buf)
	return e.buf
}

// release makes buf the next encoding's unless the cache or the last
// save's check still uses it. Only encode and save call it, with a buffer
// they stopped using: nb shares no buffer with another notebook (clone
// copies them) or a caller.
func (nb *Notebook) release(buf []byte) {
	if cap(buf) == 0 || cap(buf) > maxSpare || sameArray(buf, nb.cache.buf) || nb.held.haveData && sameArray(buf, nb.held.data) {
		return
	}
	nb.free = buf[:0]
}

// maxSpare bounds the buffer a notebook keeps for its next encoding: a
// big notebook's would hold a second copy of the file for the notebook's
// life (a 200 MB one kept 817 MB instead of 386), and its saves are rare
// next to the encoding's own cost.
const maxSpare = 32 << 20

func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// cellArray writes the notebook's cells array (non-empty) at depth, taking
// unchanged cells' text from the cache; finish records the new entries.
func (e *encoder) cellArray(v *value, depth int) {
	c := e.cache
	next := c.spare[:0]
	var moved map[*value][]byte
	misses := 0
	e.buf = append(e.buf, '[')
	for i, cell := range v.arr {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.breakLine(depth + 1)
		start := len(e.buf)
		enc, ok := c.at(i, cell)
		if !ok && misses > movedAfter {
			if moved == nil {
				moved = c.byCell()
			}
			enc, ok = moved[cell]
		}
		if ok {
			e.buf = append(e.buf, enc...)
		} else {
			misses++
			e.value(cell, depth+1)
		}
		next = append(next, cachedCell{cell: cell, start: start, end: len(e.buf)})
	}
	e.breakLine(depth)
	e.buf = append(e.buf, ']')
	c.spare, c.wrote = next, true
}

// at returns the cached text of cell when it is the one cached at index i.
func (c *cellCache) at(i int, cell *value) ([]byte, bool) {
	if i < len(c.entries) && c.entries[i].cell == cell {
		return c.entries[i].enc, true
	}
	return nil, false
}

func (c *cellCache) byCell() map[*value][]byte {
	m := make(map[*value][]byte, len(c.entries))
	for _, en := range c.entries {
		m[en.cell] = en.enc
	}
	return m
}

// finish makes the entries cellArray wrote the cache (none when it did not
// run: the notebook has no cells), pointing into buf, the finished encoding.
func (c *cellCache) finish(buf []byte) {
	c.buf = buf
	if !c.wrote {
		clear(c.entries)
		c.entries = c.entries[:0]
		return
	}
	c.wrote = false
	next := c.spare
	for i := range next {
		next[i].enc = buf[next[i].start:next[i].end:next[i].end]
	}
	clear(c.entries) // drop the old cells now, not at the next encoding
	c.entries, c.spare = next, c.entries[:0]
}

// drop forgets every cell's text and the buffer it is in.
func (c *cellCache) drop() {
	clear(c.entries)
	c.entries, c.buf = c.entries[:0], nil
}

// cloneBuffers gives c, a clone of nb, copies of nb's cache and of the
// bytes its save's check expects: notebooks share no buffer, since each
// recycles its own.
func (nb *Notebook) cloneBuffers(c *Notebook) {
	c.cache, c.free = nb.cache.clone(), nil
	if h := nb.held; h.haveData {
		if sameArray(h.data, nb.cache.buf) && len(h.data) == len(nb.cache.buf) {
			c.held = heldBytes(c.cache.buf) // one copy for both, as in nb
		} else {
			c.held = heldBytes(bytes.Clone(h.data))
		}
	}
}

// clone returns a cache for a clone of the notebook, with arrays and a
// buffer of its own: the entries are valid for any notebook of the same
// layout, and the buffer must not be recycled under the other's entries.
func (c *cellCache) clone() cellCache {
	d := cellCache{entries: append([]cachedCell(nil), c.entries...), buf: bytes.Clone(c.buf)}
	for i := range d.entries {
		en := &d.entries[i]
		en.enc = d.buf[en.start:en.end:en.end]
	}
	return d
}
