package notebook

// Tags returns cell i's metadata.tags: its strings, in order (nil when it
// has none). i must be in range.
func (nb *Notebook) Tags(i int) []string {
	md := nb.cells[i].get("metadata")
	if md == nil || md.kind != kindObject {
		return nil
	}
	list := md.get("tags")
	if list == nil || list.kind != kindArray {
		return nil
	}
	var tags []string
	for _, v := range list.arr {
		if s, ok := v.str(); ok {
			tags = append(tags, s)
		}
	}
	return tags
}

// SetTags sets cell i's metadata.tags (nbformat's list of strings), keeping
// the rest of its metadata; a cell of an unknown type is a
// *ReadOnlyCellError.
func (nb *Notebook) SetTags(i int, tags []string) error {
	if i < 0 || i >= len(nb.cells) {
		return nb.indexError("set tags of", i, len(nb.cells)-1)
	}
	if t := cellType(nb.cells[i]); !t.Known() {
		return &ReadOnlyCellError{Index: i, Type: t}
	}
	list := &value{kind: kindArray, arr: make([]*value, len(tags))}
	for j, t := range tags {
		list.arr[j] = newString(t)
	}
	md := nb.cells[i].get("metadata")
	if md == nil || md.kind != kindObject {
		md = newObject()
	} else {
		md = md.shallowCopy()
	}
	md.set("tags", list)
	nb.setCellField(i, "metadata", md)
	return nil
}
