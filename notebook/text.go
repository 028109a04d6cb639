package notebook

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The editable text view. Each cell is a marker line
//
//	# %% [code|markdown|raw] cell:N
//
// followed by its source; every line ends in "\n". A source line that starts
// with "# %%" after any number of backslashes is written with one more
// backslash, so it is never read back as a marker; the parser removes one.

const markerPrefix = "# %%"

// Text returns the notebook as editable cell-marked text.
func (nb *Notebook) Text() string {
	var b strings.Builder
	b.Grow(nb.size / 4)
	for i, c := range nb.cells {
		typ, _ := c.get("cell_type").str()
		source, _ := joinStrings(c.get("source"))
		b.WriteString(markerPrefix + " [" + typ + "] cell:" + strconv.Itoa(i) + "\n")
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
	if !strings.HasPrefix(rest, " [") {
		return bad("no [cell type] after \"# %%\"")
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return bad("unclosed '['")
	}
	t, err := ParseCellType(rest[2:end])
	if err != nil {
		return bad(err.Error())
	}
	c.typ = t
	rest = rest[end+1:]
	if rest == "" {
		return c, nil
	}
	num, ok := strings.CutPrefix(rest, " cell:")
	if !ok {
		return bad(fmt.Sprintf("unexpected %q after the cell type", rest))
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strings.HasPrefix(num, "+") {
		return bad(fmt.Sprintf("cell index %q is not a non-negative integer", num))
	}
	c.index = n
	return c, nil
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
			out.cells[i] = nb.newCell(p.typ, p.source, ids)
			continue
		}
		out.cells[i] = withSource(withType(nb.cells[p.index], p.typ), p.source)
	}
	return out, nil
}
