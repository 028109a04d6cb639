package notebook

import "fmt"

// Edit replaces cell i's source, keeping its type, metadata, outputs and id.
// A cell of an unknown type is a *ReadOnlyCellError.
func (nb *Notebook) Edit(i int, source string) error {
	if i < 0 || i >= len(nb.cells) {
		return nb.indexError("edit", i, len(nb.cells)-1)
	}
	if t := cellType(nb.cells[i]); !t.Known() {
		return &ReadOnlyCellError{Index: i, Type: t}
	}
	nb.cells[i] = withSource(nb.cells[i], source)
	return nil
}

// Insert adds a new cell at index i (0..Len()), as nbformat's new_*_cell
// builds it: empty metadata, code cells with execution_count null and no
// outputs, and an id when the notebook is nbformat 4.5 or later.
func (nb *Notebook) Insert(i int, t CellType, source string) error {
	if i < 0 || i > len(nb.cells) {
		return nb.indexError("insert", i, len(nb.cells))
	}
	if _, err := ParseCellType(string(t)); err != nil {
		return err
	}
	if len(nb.cells) >= MaxCells {
		return fmt.Errorf("%w: the notebook has %d cells, the most one may have; split it into several notebooks", ErrTooLarge, len(nb.cells))
	}
	c := nb.newCell(t, source, nb.idSet())
	nb.cells = append(nb.cells, nil)
	copy(nb.cells[i+1:], nb.cells[i:])
	nb.cells[i] = c
	return nil
}

// Delete removes cell i and returns it.
func (nb *Notebook) Delete(i int) (Cell, error) {
	if i < 0 || i >= len(nb.cells) {
		return Cell{}, nb.indexError("delete", i, len(nb.cells)-1)
	}
	c := nb.Cell(i)
	nb.cells = append(nb.cells[:i:i], nb.cells[i+1:]...)
	return c, nil
}

func (nb *Notebook) indexError(what string, i, max int) error {
	return &IndexError{What: what, Index: i, Max: max, Cells: len(nb.cells)}
}

// withSource returns a copy of cell c with the given source, or c itself
// when the source is unchanged (keeping its original spelling, or its lack
// of a source, which the view shows as an empty cell).
func withSource(c *value, source string) *value {
	if viewSource(c) == source {
		return c
	}
	c = c.shallowCopy()
	c.set("source", linesValue(source))
	return c
}

// withType returns a copy of cell c converted to type t: code cells get
// execution_count and outputs when missing; markdown and raw cells lose
// them. Code cells cannot carry attachments in nbformat, so those go too.
func withType(c *value, t CellType) *value {
	if old, _ := c.get("cell_type").str(); old == string(t) {
		return c
	}
	c = c.shallowCopy()
	c.set("cell_type", newString(string(t)))
	if t == Code {
		if c.get("execution_count") == nil {
			c.set("execution_count", nullValue)
		}
		if c.get("outputs") == nil {
			c.set("outputs", emptyArray)
		}
		c.del("attachments")
		return c
	}
	c.del("execution_count")
	c.del("outputs")
	return c
}

func (nb *Notebook) newCell(t CellType, source string, ids map[string]bool) *value {
	c := newObject()
	c.set("cell_type", newString(string(t)))
	if nb.wantsIDs() {
		c.set("id", newString(newCellID(ids)))
	}
	c.set("metadata", newObject())
	c.set("source", linesValue(source))
	if t == Code {
		c.set("execution_count", nullValue)
		c.set("outputs", emptyArray)
	}
	return c
}

// wantsIDs reports whether cells must carry ids: nbformat 4.5 and later
// require them, and earlier schemas forbid them.
func (nb *Notebook) wantsIDs() bool {
	major, minor := nb.Version()
	return major > 4 || major == 4 && minor >= 5
}
