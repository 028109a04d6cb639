package notebook

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The editable text view. Each cell is a marker line
//
//	# %% [code|markdown|raw] cell:N
//
// followed by its source; every line ends in "\n". A source line that
// starts with "# %%" after any number of backslashes is written with one
// more backslash, so it is never read back as a marker; the parser removes
// one. A cell of a type this package does not know is marked
// "# %% [TYPE] cell:N" + readOnlyNote (TYPE Go-quoted unless it is a plain
// word) and must come back unchanged.

const markerPrefix = "# %%"

// readOnlyNote ends the marker of a cell whose type is not known.
const readOnlyNote = " (read-only: a cell type evalhost does not know)"

// Text returns the notebook as editable cell-marked text.
func (nb *Notebook) Text() string {
	var b strings.Builder
	b.Grow(nb.size / 4)
	for i, c := range nb.cells {
		writeMarker(&b, cellType(c), i)
		source := viewSource(c)
		if source == "" {
			continue
		}
		for _, line := range strings.SplitAfter(source, "\n") {
			if looksLikeMarker(line) {
				b.WriteByte('\\')
			}
			b.WriteString(line)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func writeMarker(b *strings.Builder, t CellType, i int) {
	name := string(t)
	if !plainTypeName(name) {
		name = strconv.Quote(name)
	}
	b.WriteString(markerPrefix + " [" + name + "] cell:" + strconv.Itoa(i))
	if !t.Known() {
		b.WriteString(readOnlyNote)
	}
	b.WriteByte('\n')
}

// plainTypeName reports whether a cell type can stand in a marker as it is:
// printable, no spaces, no ']' and not starting with a quote.
func plainTypeName(s string) bool {
	if s == "" || s[0] == '"' {
		return false
	}
	for _, r := range s {
		if r == ']' || r == '\\' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// cellType is a cell's cell_type, which validate made sure is a string.
func cellType(c *value) CellType {
	t, _ := c.get("cell_type").str()
	return CellType(t)
}

// viewSource is the text the view shows of a cell: its source, or nothing
// when it has none (or, in a cell of an unknown type, not one as text).
func viewSource(c *value) string {
	s, _ := joinStrings(c.get("source"))
	return s
}

// looksLikeMarker reports whether line is "# %%..." behind zero or more
// backslashes: the lines the view escapes.
func looksLikeMarker(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, `\`), markerPrefix)
}

// textCell is one cell parsed from the text view.
type textCell struct {
	typ    CellType
	index  int // the original cell it reuses, or -1
	source string
	line   int // of its marker
}

// parseText splits cell-marked text into cells. One final "\n" is optional.
// Text whose every line ends in "\r\n" was saved by a CRLF editor (the view
// writes markers with "\n"): its line ends are read as "\n", so the cells do
// not gain a "\r" on every line.
func parseText(text string) ([]textCell, error) {
	text = strings.TrimPrefix(text, "\ufeff") // an editor's byte order mark (Notepad's), as python3 drops one
	if n := strings.Count(text, "\r\n"); n > 0 && n == strings.Count(text, "\n") {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil, nil
	}
	var (
		cells []textCell
		src   []string
	)
	flush := func() {
		if len(cells) > 0 {
			cells[len(cells)-1].source = strings.Join(src, "\n")
		}
		src = src[:0]
	}
	for n, line := range strings.Split(text, "\n") {
		lineNo := n + 1
		if !utf8.ValidString(line) {
			return nil, &TextError{Line: lineNo, Msg: invalidUTF8(line)}
		}
		if strings.HasPrefix(line, markerPrefix) {
			if len(cells) == MaxCells {
				return nil, &TextError{Line: lineNo, Msg: fmt.Sprintf(
					"more than %d cells, the most a notebook may have; split it into several notebooks", MaxCells)}
			}
			c, err := parseMarker(line, lineNo)
			if err != nil {
				return nil, err
			}
			flush()
			cells = append(cells, c)
			continue
		}
		if len(cells) == 0 {
			return nil, &TextError{Line: lineNo, Msg: fmt.Sprintf(
				"text before the first cell marker: %s; the text must start with a marker such as \"# %%%% [code] cell:0\" (blank lines included)",
				quoteLine(line))}
		}
		if strings.HasPrefix(line, `\`) && looksLikeMarker(line) {
			line = line[1:]
		}
		src = append(src, line)
	}
	flush()
	return cells, nil
}

// parseMarker reads "# %%", "# %% [TYPE]" or "# %% [TYPE] cell:N"; trailing
// whitespace (a CRLF editor's \r included) is ignored.
func parseMarker(line string, lineNo int) (textCell, error) {
	bad := func(why string) (textCell, error) {
		return textCell{}, &TextError{Line: lineNo, Msg: fmt.Sprintf(
			"bad cell marker %s: %s; want \"# %%%% [code|markdown|raw]\" optionally followed by \" cell:N\" (escape a source line starting with \"# %%%%\" as \"\\# %%%%\")",
			quoteLine(line), why)}
	}
	c := textCell{typ: Code, index: -1, line: lineNo}
	rest := strings.TrimRight(line[len(markerPrefix):], " \t\r")
	if rest == "" {
		return c, nil
	}
	rest, ok := strings.CutPrefix(rest, " [")
	if !ok {
		return bad("no [cell type] after \"# %%\"")
	}
	name, rest, why := markerType(rest)
	if why != "" {
		return bad(why)
	}
	c.typ = CellType(name) // an unknown type is checked against the cell it names
	if rest == "" {
		return c, nil
	}
	num, ok := strings.CutPrefix(rest, " cell:")
	if !ok {
		return bad(fmt.Sprintf("unexpected %q after the cell type", rest))
	}
	num = strings.TrimSuffix(num, readOnlyNote)
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strings.HasPrefix(num, "+") {
		return bad(fmt.Sprintf("cell index %q is not a non-negative integer", num))
	}
	c.index = n
	return c, nil
}

// markerType reads a marker's cell type up to its ']', plain or Go-quoted,
// and returns what follows; why says what is wrong.
func markerType(s string) (name, rest, why string) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", "unterminated quoted cell type"
		}
		name, _ = strconv.Unquote(q)
		rest, ok := strings.CutPrefix(s[len(q):], "]")
		if !ok {
			return "", "", "no ']' after the quoted cell type"
		}
		return name, rest, ""
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", "", "unclosed '['"
	}
	return s[:end], s[end+1:], ""
}

// invalidUTF8 says where line stops being UTF-8, which a notebook must be.
func invalidUTF8(line string) string {
	col := 1
	for i, r := range line {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(line[i:]); size == 1 {
				return fmt.Sprintf("byte %#x at column %d is not UTF-8; notebooks are UTF-8: convert the text first (e.g. iconv -f latin1 -t utf-8)", line[i], col)
			}
		}
		col++
	}
	return "not valid UTF-8"
}

func quoteLine(line string) string {
	const max = 80
	if len(line) > max {
		return strconv.Quote(line[:max]) + "..."
	}
	return strconv.Quote(line)
}

// ApplyText returns a new notebook whose cells are those of text. A marker's
// cell:N reuses original cell N (metadata, outputs, attachments, id and key
// order kept; its type and source updated) the first time N appears. Cells
// without cell:N, and those whose N is not an original cell or was already
// reused above, are new, as the reference runtime's notebook editing makes
// them. nb itself is not changed. Errors match ErrBadText.
func (nb *Notebook) ApplyText(text string) (*Notebook, error) {
	parsed, err := parseText(text)
	if err != nil {
		return nil, err
	}
	used := make(map[int]bool, len(parsed))
	for i, p := range parsed {
		if p.index < 0 {
			continue
		}
		if p.index >= len(nb.cells) || used[p.index] {
			parsed[i].index = -1 // no unused original cell N: a new cell
			continue
		}
		used[p.index] = true
	}
	out := nb.clone()
	out.cells = make([]*value, len(parsed))
	ids := maps.Clone(nb.idSet())
	for i, p := range parsed {
		if p.index < 0 {
			if !p.typ.Known() {
				return nil, &TextError{Line: p.line, Msg: fmt.Sprintf(
					"unknown cell type %q: want code, markdown or raw (a cell of another type read from the notebook keeps the \"cell:N\" its marker had)", p.typ)}
			}
			out.cells[i] = nb.newCell(p.typ, p.source, ids)
			continue
		}
		orig := nb.cells[p.index]
		if was := cellType(orig); !was.Known() || !p.typ.Known() {
			if err := checkReadOnly(p, was, orig); err != nil {
				return nil, err
			}
			out.cells[i] = orig
			continue
		}
		out.cells[i] = withSource(withType(orig, p.typ), p.source)
	}
	return out, nil
}

// checkReadOnly allows text cell p, which reuses cell orig of type was,
// only when one of the types is unknown and nothing changed.
func checkReadOnly(p textCell, was CellType, orig *value) error {
	switch {
	case was.Known():
		return &TextError{Line: p.line, Msg: fmt.Sprintf(
			"cell:%d is a %s cell and cannot become a %q cell, a type evalhost does not know: want code, markdown or raw", p.index, was, p.typ)}
	case p.typ != was:
		return &TextError{Line: p.line, Msg: fmt.Sprintf(
			"cell:%d is a %q cell, a type evalhost does not know, so it is read-only and cannot become a %q cell: keep its marker as the view shows it, or delete the whole cell (its marker and its lines)", p.index, was, p.typ)}
	case p.source != viewSource(orig):
		return &TextError{Line: p.line, Msg: fmt.Sprintf(
			"cell:%d is a %q cell, a type evalhost does not know, so it is read-only: its text must stay as the view shows it; undo the change, or delete the whole cell (its marker and its lines)", p.index, was)}
	}
	return nil
}
