package notebook

import (
	"fmt"
	"strconv"
)

// validate checks what this package relies on, and what nbformat requires of
// every cell, so a loaded notebook can be viewed and edited safely. It is not
// a full nbformat schema check; unknown fields are allowed and kept, and so
// are cells of a type it does not know, which are read-only.
func validate(root *value) error {
	if root.kind != kindObject {
		return &StructureError{Cell: -1, Msg: fmt.Sprintf("top level is a JSON %s, want an object", root.kind)}
	}
	cells := root.get("cells")
	if cells == nil {
		msg := `missing "cells" array`
		if root.get("worksheets") != nil {
			// nbformat 3 is converted as it is read (upgradeV3); an older
			// one, or one without its version, is not.
			if v := root.get("nbformat"); v != nil && v.kind == kindNumber && v.raw != "" && v.raw < "4" && len(v.raw) == 1 {
				// 1 or 2: nbformat converts them too
				msg += "; this is an nbformat " + v.raw + " notebook: convert it with `jupyter nbconvert --to notebook --nbformat 4`"
			} else {
				msg += `; it has worksheets, as nbformat 3 had, but no "nbformat": 3 saying so`
			}
		}
		return &StructureError{Cell: -1, Field: "cells", Msg: msg}
	}
	if cells.kind != kindArray {
		return &StructureError{Cell: -1, Field: "cells", Msg: fmt.Sprintf("is a %s, want an array of cells", cells.kind)}
	}
	if md := root.get("metadata"); md != nil && md.kind != kindObject {
		return &StructureError{Cell: -1, Field: "metadata", Msg: fmt.Sprintf("is a %s, want an object", md.kind)}
	}
	for _, name := range [...]string{"nbformat", "nbformat_minor"} {
		v := root.get(name)
		if v == nil {
			continue
		}
		if v.kind != kindNumber {
			return &StructureError{Cell: -1, Field: name, Msg: fmt.Sprintf("is a %s, want a number", v.kind)}
		}
		n, err := strconv.Atoi(v.raw)
		if err != nil { // 4.0, NaN: nbformat refuses them too
			return &StructureError{Cell: -1, Field: name, Msg: fmt.Sprintf("is %s, want a whole number", v.raw)}
		}
		if name == "nbformat" && n > 4 {
			// nbformat.read refuses it too ("Unsupported nbformat
			// version"): read as 4 and written back, the file would claim
			// a format whose rules did not write it.
			return &StructureError{Cell: -1, Field: name, Msg: fmt.Sprintf("is %d, a newer format than nbformat 4, "+
				"the newest evalhost (and Jupyter's nbformat) reads; convert it to nbformat 4 with the tool that wrote it", n)}
		}
	}
	for i, c := range cells.arr {
		if err := validateCell(i, c); err != nil {
			return err
		}
	}
	return nil
}

func validateCell(i int, c *value) error {
	if c.kind != kindObject {
		return &StructureError{Cell: i, Msg: fmt.Sprintf("is a JSON %s, want an object", c.kind)}
	}
	t := c.get("cell_type")
	if t == nil {
		return &StructureError{Cell: i, Field: "cell_type", Msg: "missing; want code, markdown or raw"}
	}
	name, ok := t.str()
	if !ok {
		return &StructureError{Cell: i, Field: "cell_type", Msg: fmt.Sprintf("is a %s, want the string code, markdown or raw", t.kind)}
	}
	if md := c.get("metadata"); md != nil && md.kind != kindObject {
		return &StructureError{Cell: i, Field: "metadata", Msg: fmt.Sprintf("is a %s, want an object", md.kind)}
	}
	if !CellType(name).Known() {
		// A cell type from a newer format: nbformat asks only for a
		// metadata object of it, and this package never looks inside.
		return nil
	}
	if src := c.get("source"); src != nil {
		if _, ok := joinStrings(src); !ok {
			return &StructureError{Cell: i, Field: "source", Msg: "want a string or an array of strings"}
		}
	}
	if out := c.get("outputs"); out != nil && out.kind != kindArray {
		return &StructureError{Cell: i, Field: "outputs", Msg: fmt.Sprintf("is a %s, want an array", out.kind)}
	}
	if id := c.get("id"); id != nil && id.kind != kindString {
		return &StructureError{Cell: i, Field: "id", Msg: fmt.Sprintf("is a %s, want a string", id.kind)}
	}
	return nil
}
