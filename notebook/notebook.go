package notebook

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
)

// CellType is a notebook cell's cell_type.
type CellType string

// The cell types nbformat 4 knows.
const (
	Code     CellType = "code"
	Markdown CellType = "markdown"
	Raw      CellType = "raw"
)

// Known reports whether t is one of the cell types nbformat 4 defines.
// Other types come from newer notebook formats (nbformat lets a future
// 4.x minor version add them): they are kept byte for byte, shown
// read-only in the text view, and never created, edited or converted.
func (t CellType) Known() bool {
	return t == Code || t == Markdown || t == Raw
}

// ParseCellType checks a cell type name: code, markdown or raw.
func ParseCellType(s string) (CellType, error) {
	switch t := CellType(s); t {
	case Code, Markdown, Raw:
		return t, nil
	}
	return "", fmt.Errorf("unknown cell type %q: want code, markdown or raw", s)
}

// Notebook is a loaded .ipynb document. It keeps the file's JSON text for
// everything it does not change (unknown fields, key order, number and
// string spellings, indentation), so Bytes of an unedited notebook returns
// the file it was parsed from. A Notebook is not safe for concurrent use.
type Notebook struct {
	root   *value // the top-level object; its "cells" member is cells
	cells  []*value
	layout layout
	// src is the JSON text root was parsed from while nothing has changed
	// (srcRoot is that root, srcCells its cells, apart from cells, which
	// edits change in place): encoded, it is src itself, in whatever layout
	// the file has, which the encoder may not write (short arrays on one
	// line). The first encoding after a change drops it.
	src      string
	srcRoot  *value
	srcCells []*value
	ids      map[string]bool // cell ids in use, built on first need
	size     int             // bytes last parsed or written: a capacity hint
	origin   string          // canonical path of the file loaded or last saved, if any
	named    string          // that path as the caller named it (made absolute), links unresolved
	held     held            // that file's content then
	cache    cellCache       // each cell's text as last encoded
	free     []byte          // an encoding's buffer no longer used, for the next one
	// repaired is the cells as repairCellIDs last left them (nil: never),
	// so that a save in which no id can have changed checks none.
	repaired []*value
	_        noCopy // a copy would share the buffers it recycles: go vet says so
}

// noCopy makes go vet's copylocks check refuse a Notebook copied by value.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// Cell describes one cell.
type Cell struct {
	Index  int
	Type   CellType
	ID     string // empty when the cell has none (nbformat < 4.5)
	Source string // "" when a cell of an unknown type has no source text
}

// New returns an empty nbformat 4.5 notebook, as nbformat.v4.new_notebook
// writes it.
func New() *Notebook {
	root := newObject()
	root.set("cells", emptyArray)
	root.set("metadata", newObject())
	root.set("nbformat", newRaw(kindNumber, "4"))
	root.set("nbformat_minor", newRaw(kindNumber, "5"))
	return &Notebook{root: root, layout: nbformatLayout}
}

// Parse reads and validates notebook JSON. Errors match ErrInvalid and are
// a *SyntaxError or a *StructureError saying what is wrong and where.
func Parse(data []byte) (*Notebook, error) {
	src := string(data)
	root, err := parseJSON(src)
	if err != nil {
		return nil, err
	}
	if isV3(root) {
		// Converted as Jupyter reads it; saved, it is nbformat 4.5 in
		// nbformat's layout, as Jupyter saves it.
		if root, err = upgradeV3(root); err != nil {
			return nil, err
		}
		if err := validate(root); err != nil {
			return nil, err
		}
		return &Notebook{root: root, cells: root.get("cells").arr, layout: nbformatLayout, size: len(data)}, nil
	}
	if err := validate(root); err != nil {
		return nil, err
	}
	return &Notebook{root: root, cells: root.get("cells").arr, layout: detectLayout(src), size: len(data),
		src: src, srcRoot: root, srcCells: slices.Clone(root.get("cells").arr)}, nil
}

// Bytes returns the notebook as JSON in the file's layout (nbformat's for
// new notebooks).
func (nb *Notebook) Bytes() []byte {
	return bytes.Clone(nb.encode()) // the cache keeps pointing into encode's buffer
}

// syncedRoot returns the root with its cells member pointing at nb.cells.
func (nb *Notebook) syncedRoot() *value {
	if cells := nb.root.get("cells"); cells != nil && sameCells(cells.arr, nb.cells) {
		return nb.root
	}
	root := nb.root.shallowCopy()
	root.set("cells", &value{kind: kindArray, arr: nb.cells})
	nb.root = root
	return root
}

// unedited reports whether the notebook is still what src holds, and
// drops src once it is not.
func (nb *Notebook) unedited() bool {
	if nb.srcRoot == nil {
		return false
	}
	if nb.root == nb.srcRoot && sameCells(nb.srcCells, nb.cells) {
		return true
	}
	nb.src, nb.srcRoot, nb.srcCells = "", nil, nil
	return false
}

func sameCells(a, b []*value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Len returns the number of cells.
func (nb *Notebook) Len() int { return len(nb.cells) }

// Cell returns cell i, which must be in range.
func (nb *Notebook) Cell(i int) Cell {
	c := nb.cells[i]
	t, _ := c.get("cell_type").str()
	id, _ := c.get("id").str()
	src, _ := joinStrings(c.get("source"))
	return Cell{Index: i, Type: CellType(t), ID: id, Source: src}
}

// Cells returns every cell.
func (nb *Notebook) Cells() []Cell {
	out := make([]Cell, len(nb.cells))
	for i := range nb.cells {
		out[i] = nb.Cell(i)
	}
	return out
}

// Version returns nbformat and nbformat_minor (0 when absent).
func (nb *Notebook) Version() (major, minor int) {
	num := func(name string) int {
		v := nb.root.get(name)
		if v == nil || v.kind != kindNumber {
			return 0
		}
		n, _ := strconv.Atoi(v.raw)
		return n
	}
	return num("nbformat"), num("nbformat_minor")
}

// Language returns the programming language the notebook's metadata names:
// kernelspec.language, else language_info.name; "" when it names none.
func (nb *Notebook) Language() string {
	md := nb.root.get("metadata")
	if lang, ok := md.get("kernelspec").get("language").str(); ok && lang != "" {
		return lang
	}
	lang, _ := md.get("language_info").get("name").str()
	return lang
}

// clone returns a notebook that shares nb's values; since edits copy on
// write, changing one never changes the other.
func (nb *Notebook) clone() *Notebook {
	// Field by field, not *nb: ids, the buffers and repaired are its own
	// (its first save checks every id).
	c := &Notebook{root: nb.root, cells: append([]*value(nil), nb.cells...), layout: nb.layout, size: nb.size,
		origin: nb.origin, named: nb.named, held: nb.held,
		src: nb.src, srcRoot: nb.srcRoot, srcCells: nb.srcCells}
	nb.cloneBuffers(c)
	return c
}
