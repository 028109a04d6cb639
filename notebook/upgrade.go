package notebook

import (
	"fmt"
	"strings"
)

// isV3 reports whether root is an nbformat 3 notebook: worksheets, no
// cells, nbformat 3.
func isV3(root *value) bool {
	v := root.get("nbformat")
	return root.kind == kindObject && root.get("cells") == nil && root.get("worksheets") != nil &&
		v != nil && v.kind == kindNumber && v.raw == "3"
}

// upgradeV3 converts an nbformat 3 notebook to nbformat 4.5 as nbformat
// reads it with as_version=4 (v3's rejoin_lines, then v4.convert.upgrade)
// and writes it (v4's strip_transient and split_lines, sorted keys):
// worksheets flattened into cells, each given an id; a heading cell
// becomes markdown "# title" ('#' per level, its lines joined by spaces);
// a code cell's input is its source, prompt_number its execution_count,
// language dropped, collapsed moved into metadata; pyout becomes
// execute_result and pyerr error, a display's v3 keys (png, text, html...)
// its data's MIME types; a stream's "stream" its name. Metadata loses
// name, signature and orig_nbformat, as nbformat's writer drops them. What
// nbformat refuses (no metadata, a worksheet without cells) is a
// *StructureError.
func upgradeV3(root *value) (*value, error) {
	md := root.get("metadata")
	if md == nil || md.kind != kindObject {
		return nil, &StructureError{Cell: -1, Field: "metadata", Msg: "missing in this nbformat 3 notebook; nbformat cannot convert it either"}
	}
	md = md.shallowCopy()
	for _, name := range [...]string{"name", "signature", "orig_nbformat", "orig_nbformat_minor"} {
		md.del(name)
	}
	var cells []*value
	wss := root.get("worksheets")
	if wss.kind != kindArray {
		return nil, &StructureError{Cell: -1, Field: "worksheets", Msg: fmt.Sprintf("is a %s, want an array", wss.kind)}
	}
	ids := map[string]bool{}
	for w, ws := range wss.arr {
		wcells := ws.get("cells")
		if wcells == nil || wcells.kind != kindArray {
			return nil, &StructureError{Cell: -1, Field: "worksheets", Msg: fmt.Sprintf("worksheet %d has no cells array", w)}
		}
		for _, c := range wcells.arr {
			if c.kind != kindObject {
				return nil, &StructureError{Cell: len(cells), Msg: fmt.Sprintf("is a JSON %s, want an object", c.kind)}
			}
			cell, err := upgradeCellV3(c, len(cells))
			if err != nil {
				return nil, err
			}
			cell.set("id", newString(newCellID(ids)))
			cells = append(cells, cell)
		}
	}
	out := newObject()
	for _, m := range root.obj {
		switch m.name {
		case "worksheets", "nbformat", "nbformat_minor", "orig_nbformat", "orig_nbformat_minor", "metadata":
		default:
			out.obj = append(out.obj, m)
		}
	}
	out.set("metadata", md)
	out.set("cells", &value{kind: kindArray, arr: cells})
	out.set("nbformat", newRaw(kindNumber, "4"))
	out.set("nbformat_minor", newRaw(kindNumber, "5"))
	return normalized(out), nil // nbformat's json.dumps: sorted keys, its strings
}

func upgradeCellV3(c *value, i int) (*value, error) {
	c = c.shallowCopy()
	md := c.get("metadata")
	if md == nil {
		md = newObject()
	} else if md.kind != kindObject {
		return nil, &StructureError{Cell: i, Field: "metadata", Msg: fmt.Sprintf("is a %s, want an object", md.kind)}
	} else {
		md = md.shallowCopy()
	}
	md.del("trusted")
	typ, _ := c.get("cell_type").str()
	switch typ {
	case "code":
		c.del("language")
		if v := c.get("collapsed"); v != nil {
			md.set("collapsed", v)
			c.del("collapsed")
		}
		src := c.get("input")
		c.del("input")
		c.set("source", splitText(src))
		count := c.get("prompt_number")
		if count == nil {
			count = nullValue
		}
		c.del("prompt_number")
		c.set("execution_count", count)
		outs := c.get("outputs")
		if outs == nil || outs.kind != kindArray {
			return nil, &StructureError{Cell: i, Field: "outputs", Msg: "missing in this nbformat 3 code cell; want an array"}
		}
		upgraded := make([]*value, len(outs.arr))
		for j, o := range outs.arr {
			u, err := upgradeOutputV3(o)
			if err != nil {
				return nil, &StructureError{Cell: i, Field: "outputs", Msg: fmt.Sprintf("output %d: %v", j, err)}
			}
			upgraded[j] = u
		}
		c.set("outputs", &value{kind: kindArray, arr: upgraded})
	case "heading":
		c.set("cell_type", newString("markdown"))
		level := 1
		if v := c.get("level"); v != nil {
			// nbformat 3's schema: 1 to 6 (nbformat only logs another,
			// and would write a title of a million '#' as readily).
			if _, err := fmt.Sscan(v.raw, &level); err != nil || v.kind != kindNumber || level < 1 || level > 6 {
				return nil, &StructureError{Cell: i, Field: "level", Msg: fmt.Sprintf("is %s, want a heading level from 1 to 6", v.raw)}
			}
			c.del("level")
		}
		text, _ := joinV3(c.get("source"))
		lines := splitLines(text)
		for k, l := range lines {
			lines[k] = trimLineBreak(l)
		}
		c.set("source", linesValue(strings.Repeat("#", level)+" "+strings.Join(lines, " ")))
	default:
		if typ == "html" {
			c.set("cell_type", newString("markdown"))
		}
		if src := c.get("source"); src != nil {
			c.set("source", splitText(src))
		}
		if r := c.get("rendered"); r != nil && r.kind == kindArray {
			if s, ok := joinV3(r); ok {
				c.set("rendered", newString(s))
			}
		}
	}
	c.set("metadata", md)
	return c, nil
}

// v3MimeKeys are nbformat's v3 output keys and their MIME types, in the
// order its to_mime_key renames them.
var v3MimeKeys = [...][2]string{
	{"text", "text/plain"}, {"html", "text/html"}, {"svg", "image/svg+xml"}, {"png", "image/png"},
	{"jpeg", "image/jpeg"}, {"latex", "text/latex"}, {"json", "application/json"}, {"javascript", "application/javascript"},
}

// v3Multiline are the output keys v3's reader joins when split in lines.
var v3Multiline = map[string]bool{"text": true, "html": true, "svg": true, "latex": true, "javascript": true, "json": true}

func upgradeOutputV3(o *value) (*value, error) {
	if o.kind != kindObject {
		return nil, fmt.Errorf("is a JSON %s, want an object", o.kind)
	}
	o = o.shallowCopy()
	typ, _ := o.get("output_type").str()
	switch typ {
	case "pyout", "display_data":
		md := o.get("metadata")
		if md == nil {
			md = newObject()
		}
		if typ == "pyout" {
			o.set("output_type", newString("execute_result"))
			count := o.get("prompt_number")
			if count == nil {
				count = nullValue
			}
			o.del("prompt_number")
			o.set("execution_count", count)
		}
		data := newObject()
		kept := o.obj[:0:0]
		for _, m := range o.obj {
			switch m.name {
			case "output_type", "execution_count", "metadata":
				kept = append(kept, m)
				continue
			}
			v := m.val
			if v3Multiline[m.name] && v.kind == kindArray {
				if s, ok := joinV3(v); ok {
					v = newString(s)
				}
			}
			data.set(m.name, v)
		}
		o.obj = kept
		data = mimeKeys(data)
		if j := data.get("application/json"); j != nil && j.kind == kindString {
			s, _ := j.str()
			parsed, err := parseJSON(s)
			if err != nil {
				return nil, fmt.Errorf("its json is not valid JSON: %w", err)
			}
			data.set("application/json", parsed)
		}
		for k, m := range data.obj {
			if s, ok := m.val.str(); ok && splitsMime(m.name) {
				data.obj[k].val = linesValue(s)
			}
		}
		if md.kind == kindObject {
			md = mimeKeys(md.shallowCopy())
		}
		o.set("data", data)
		o.set("metadata", md)
	case "pyerr":
		o.set("output_type", newString("error"))
	case "stream":
		name := o.get("stream")
		if name == nil {
			name = newString("stdout")
		}
		o.del("stream")
		o.set("name", name)
		if t := o.get("text"); t != nil {
			o.set("text", splitText(t))
		}
	}
	return o, nil
}

// mimeKeys renames v3's keys of obj (a copy the caller owns) to MIME
// types, as nbformat's to_mime_key does.
func mimeKeys(obj *value) *value {
	for _, km := range v3MimeKeys {
		if v := obj.get(km[0]); v != nil {
			obj.del(km[0])
			obj.set(km[1], v)
		}
	}
	return obj
}

// splitText is a v3 multiline field as nbformat's v4 writer stores it: the
// text v3's reader joins, split with str.splitlines(True). What is neither
// a string nor an array of strings is kept as it is.
func splitText(v *value) *value {
	if v == nil {
		return linesValue("")
	}
	s, ok := joinV3(v)
	if !ok {
		return v
	}
	return linesValue(s)
}

// joinV3 is nbformat v3's _join_lines: lines written by splitlines(True)
// are concatenated, those of an old splitlines() joined with "\n".
func joinV3(v *value) (string, bool) {
	if v == nil || v.kind != kindArray {
		return joinStrings(v)
	}
	parts := make([]string, len(v.arr))
	for i, e := range v.arr {
		s, ok := e.str()
		if !ok {
			return "", false
		}
		parts[i] = s
	}
	if len(parts) > 0 && (strings.HasSuffix(parts[0], "\n") || strings.HasSuffix(parts[0], "\r")) {
		return strings.Join(parts, ""), true
	}
	return strings.Join(parts, "\n"), true
}

// trimLineBreak drops the line break splitLines kept at the end of l.
func trimLineBreak(l string) string {
	for _, sep := range [...]string{"\r\n", "\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\u0085", "\u2028", "\u2029"} {
		if strings.HasSuffix(l, sep) {
			return l[:len(l)-len(sep)]
		}
	}
	return l
}
