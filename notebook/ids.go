package notebook

import (
	"crypto/rand"
	"encoding/hex"
)

// idSet returns the ids in use, built once per Notebook so repeated inserts
// stay linear; deleted cells' ids may linger, which only avoids more ids.
func (nb *Notebook) idSet() map[string]bool {
	if nb.ids != nil {
		return nb.ids
	}
	ids := make(map[string]bool, len(nb.cells))
	for _, c := range nb.cells {
		if id, ok := c.get("id").str(); ok {
			ids[id] = true
		}
	}
	nb.ids = ids
	return ids
}

// newCellID returns an id like nbformat's (uuid4().hex[:8]: eight lowercase
// hex digits) not in ids, and adds it there.
func newCellID(ids map[string]bool) string {
	var b [4]byte
	for {
		rand.Read(b[:]) // never fails since Go 1.24
		id := hex.EncodeToString(b[:])
		if !ids[id] {
			ids[id] = true
			return id
		}
	}
}

// repairCellIDs gives every cell of an nbformat 4.5+ notebook that lacks a
// valid, unique id a new one, as nbformat's writer does (its validate adds
// missing ids and renames duplicates after the first; an id the schema
// refuses, which nbformat only reports, is replaced too, since no reader
// can use it). Cells of unknown types stay byte for byte; a known cell
// sharing one's id gets a new one. Earlier versions, whose schema has no
// ids, are left alone. It returns how many cells changed.
//
// Save runs it every time, and nb run saves after every cell: when no cell
// was added, moved or removed and no cell's id or type changed since the
// last repair, the ids are still the repaired ones and it checks no id.
func (nb *Notebook) repairCellIDs() int {
	if !nb.wantsIDs() {
		return 0
	}
	if nb.idsStillRepaired() {
		return 0
	}
	seen := map[string]bool{}
	for _, c := range nb.cells {
		if id, ok := c.get("id").str(); ok && !cellType(c).Known() {
			seen[id] = true
		}
	}
	changed := 0
	for i, c := range nb.cells {
		if !cellType(c).Known() {
			continue
		}
		id, ok := c.get("id").str()
		if !ok || !validCellID(id) || seen[id] {
			id = newCellID(nb.idSet())
			nb.setCellField(i, "id", newString(id))
			changed++
		}
		seen[id] = true
	}
	nb.repaired = append(nb.repaired[:0], nb.cells...)
	return changed
}

// idsStillRepaired reports whether the cells' ids and types are those the
// last repair left, and records the cells that changed otherwise. Values
// are immutable, so an unchanged cell pointer, or a changed cell with the
// same id and cell_type values, has the same id and type; only the cells
// that changed are looked into.
func (nb *Notebook) idsStillRepaired() bool {
	last := nb.repaired
	if last == nil || len(last) != len(nb.cells) {
		return false
	}
	for i, c := range nb.cells {
		if c == last[i] {
			continue
		}
		if c.get("id") != last[i].get("id") || c.get("cell_type") != last[i].get("cell_type") {
			return false
		}
		last[i] = c // so that later repairs skip it
	}
	return true
}

// validCellID is nbformat 4.5's schema for an id: 1 to 64 ASCII letters,
// digits, '-' and '_'.
func validCellID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
