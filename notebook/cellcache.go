package notebook

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
}

type cachedCell struct {
	cell *value
	// enc is the cell's text at depth 2 in the notebook's layout, without
	// the line break before it; it points into the last encoding's buffer,
	// which the cache thus keeps (and nothing else).
	enc        []byte
	start, end int // enc's offsets while the buffer grows
}

// movedAfter is how many cells in one encoding may miss the cache at their
// own index before it looks them up by pointer: an edit changes a few
// cells in place, while an insert, delete or apply of text moves them.
const movedAfter = 8

// encode returns the notebook's JSON, encoding only the cells that changed
// since the last encoding. The cache points into the buffer: it is never
// changed, and never handed out (Bytes copies it).
func (nb *Notebook) encode() []byte {
	root := nb.syncedRoot()
	e := encoder{indent: nb.layout.indent, newline: nb.layout.newline, buf: make([]byte, 0, nb.size+nb.size/8+4096),
		cells: root.get("cells"), cache: &nb.cache}
	e.value(root, 0)
	if nb.layout.finalNewline {
		e.buf = append(e.buf, nb.layout.newline...)
	}
	nb.cache.finish(e.buf)
	nb.size = len(e.buf)
	return e.buf
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
	clear(c.entries) // drop the old cells and buffer now, not at the next encoding
	c.entries, c.spare = next, c.entries[:0]
}

// clone returns a cache for a clone of the notebook: the same entries,
// which are valid for any notebook of the same layout, in arrays of its own.
func (c *cellCache) clone() cellCache {
	return cellCache{entries: append([]cachedCell(nil), c.entries...)}
}
