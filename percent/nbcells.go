package percent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// This file ports how jupytext 1.19 reads one cell of a percent script
// into a notebook cell (jupytext/cell_reader.py: DoublePercentScriptCellReader
// and the ScriptCellReader and BaseCellReader methods it uses), so that
// ReadNotebook's cells are jupytext's, their source and metadata included.

var (
	// start_code_re and alternative_start_code_re, with Python's \s.
	// Compiled on first use: at init they would cost every evalhost start.
	jtStartRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[` + pySpace + `]*#[` + pySpace + `]*%%(%*)[` + pySpace + `](.*)$`)
	})
	jtAltStartRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[` + pySpace + `]*#[` + pySpace + `]*(%%|<codecell>|In\[[0-9 ]*\]:?)[` + pySpace + `]*$`)
	})
	codeFenceRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$") })
	escapedCodeStart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(# |#)*(#|# )\+`) })
)

// jtMarker says whether line starts a cell, as jupytext's percent reader
// sees it: "# %%" and a space or tab, a bare "# %%", "# In[1]:" or "#
// <codecell>". "# %%[markdown]" and "# %%%%" are not markers to it.
func jtMarker(line string) bool {
	return jtStartRe().MatchString(line) || jtAltStartRe().MatchString(line)
}

// cellReader reads a script's cells one after the other.
type cellReader struct {
	lines           []string // the script's lines after its header
	defaultLanguage string
	commentMagics   bool
	jsonMetadata    bool                // a marker's options were JSON: jupytext's cell_metadata_json
	closers         map[string][2][]int // per comment, fenceCloser's tables
}

// jtCell is one cell as the reader builds it.
type jtCell struct {
	cellType    string // "code", "markdown", "raw", or what a cell_type option says
	language    string // a language option's string ("" when none)
	md          map[string]any
	comment     string   // the prefix uncommented: "#", or "" in a raw cell active in the script
	org         []string // its lines as written, between its marker and its end
	source      []string // and as the notebook has them
	linesToNext int
}

// read reads the cell at r.lines[at:] and returns it and where the next
// starts (jupytext's BaseCellReader.read).
func (r *cellReader) read(at int) (NotebookCell, int, error) {
	lines := r.lines[at:]
	c := jtCell{comment: "#", md: map[string]any{}}
	if jtStartRe().MatchString(lines[0]) {
		line := uncommentPrefix(lines[0], "#")
		c.md = r.optionsToMetadata(line[strings.Index(line, "%%")+2:])
	}
	if lang, ok := c.md["language"]; ok {
		delete(c.md, "language")
		if pyTruthy(lang) {
			s, ok := lang.(string)
			if !ok {
				return NotebookCell{}, 0, fmt.Errorf("%w: the cell names a language that is no string, %v (jupytext fails reading it)", ErrBadCell, lang)
			}
			c.language = s
		}
	}
	next := r.findCellContent(&c, at)
	org := c.org
	if len(org) == 0 {
		org = []string{""}
	}
	if c.linesToNext != pep8LinesBetweenCells(org, lines[next:]) {
		c.md["lines_to_next_cell"] = int64(c.linesToNext)
	}
	if c.language != "" {
		c.md["language"] = c.language
	}
	cell := NotebookCell{Type: "raw", Source: strings.Join(c.source, "\n"), Metadata: c.md, Line: at + 1}
	if c.cellType == "code" || c.cellType == "markdown" {
		cell.Type = c.cellType
	}
	return cell, at + next, nil
}

// findCellContent sets c's type, lines and lines_to_next_cell and returns
// where the next cell starts in r.lines[at:] (DoublePercentScriptCellReader's).
func (r *cellReader) findCellContent(c *jtCell, at int) int {
	lines := r.lines[at:]
	end, next := r.findCellEnd(c, at)
	start := 0
	if jtMarker(lines[0]) {
		start = 1
	}
	c.org = lines[start:max(start, end)]
	c.source = r.extractContent(c, slices.Clone(c.org))
	c.linesToNext = 1
	if end < len(lines) {
		c.linesToNext = next - end
		if next >= len(lines) {
			c.linesToNext++
		}
	}
	return next
}

// findCellEnd returns where the cell at r.lines[at:] ends and where the
// next starts, relative to at, and sets its type.
func (r *cellReader) findCellEnd(c *jtCell, at int) (end, next int) {
	lines := r.lines[at:]
	if t, ok := c.md["cell_type"]; ok {
		delete(c.md, "cell_type")
		c.cellType, _ = t.(string)
		if c.cellType == "" {
			c.cellType = "\x00" // not code, markdown or raw: a raw cell
		}
	} else if !isActive("ipynb", c.md, true) {
		if c.md["active"] == "" {
			delete(c.md, "active")
		}
		c.cellType = "raw"
		if isActive("py", c.md, true) {
			c.comment = ""
		}
	} else {
		c.cellType = "code"
	}
	next = len(lines)
	lang := c.language
	if lang == "" {
		lang = r.defaultLanguage
	}
	parser := parserFor(lang)
	var fence *fenceMark
	for i, line := range lines {
		if parser.quoted() {
			parser.read(line)
			continue
		}
		parser.read(line)
		if c.cellType == "markdown" || c.cellType == "raw" {
			// A fenced block (a mermaid chart) may hold "%%" lines.
			text := uncommentPrefix(line, c.comment)
			if fence != nil {
				if fence.closedBy(text) {
					fence = nil
				}
				continue
			}
			if f := openingFence(text); f != nil && r.closedLater(at+i+1, c.comment, *f) {
				fence = f
				continue
			}
		}
		if i > 0 && jtMarker(line) {
			next = i
			break
		}
	}
	switch {
	case lastTwoLinesBlank(lines[:next]):
		return next - 2, next
	case next > 0 && lines[next-1] == "":
		// Only an empty line separates cells: one of spaces is the cell's.
		return next - 1, next
	}
	return next, next
}

// lastTwoLinesBlank is jupytext's last_two_lines_blank.
func lastTwoLinesBlank(lines []string) bool {
	n := len(lines)
	return n >= 3 && !pyBlank(lines[n-3]) && pyBlank(lines[n-2]) && pyBlank(lines[n-1])
}

// extractContent is the cell's source from its lines (jupytext's
// extract_content): a markdown or raw cell of one triple-quoted string
// is the string's text, a cell not active in the script or in another
// language than the notebook's is uncommented, a code cell's magics are
// uncommented.
func (r *cellReader) extractContent(c *jtCell, lines []string) []string {
	if !isActive("py", c.md, c.cellType == "code") {
		if text, ok := tripleQuoted(c, strings.Join(lines, "\n")); ok {
			return pySplitLines(text)
		}
	}
	_, hasActive := c.md["active"]
	if !isActive("py", c.md, true) || !hasActive && c.language != "" && c.language != r.defaultLanguage {
		return uncommentAll(lines, c.comment)
	}
	lang := c.language
	if lang == "" {
		lang = r.defaultLanguage
	}
	if r.commentMagics {
		if isActive("py", c.md, true) {
			uncommentMagicsIn(lines, lang)
		} else {
			lines = uncommentAll(lines, "#")
		}
	}
	if c.cellType == "code" {
		return unescapeCodeStart(lines, lang)
	}
	return uncommentAll(lines, c.comment)
}

// tripleQuoted reads a cell whose content is one triple-quoted string
// (r or R prefixed too) as its text, and records its quotes in
// cell_marker as jupytext does.
func tripleQuoted(c *jtCell, content string) (string, bool) {
	content = pyStrip(content)
	for _, prefix := range []string{"", "r", "R"} {
		for _, q := range []string{`"""`, "'''"} {
			left, right := prefix+q, q
			if !strings.HasPrefix(content, left) || !strings.HasSuffix(content, right) || len(content) < len(left+right) {
				continue
			}
			text := content[len(left) : len(content)-len(right)]
			if rest, ok := strings.CutPrefix(text, "\n"); ok {
				text, left = rest, left+"\n"
			}
			if rest, ok := strings.CutSuffix(text, "\n"); ok {
				text, right = rest, "\n"+right
			}
			switch {
			case prefix == "":
				if len(left) == 4 && len(right) == 4 {
					c.md["cell_marker"] = left[:3]
				}
			case len(left)-1 == 4 && len(right) == 4:
				c.md["cell_marker"] = left[:4]
			default:
				c.md["cell_marker"] = left + "," + right
			}
			return text, true
		}
	}
	return "", false
}

// uncommentAll is jupytext's uncomment(lines, prefix).
func uncommentAll(lines []string, prefix string) []string {
	for i, l := range lines {
		lines[i] = uncommentPrefix(l, prefix)
	}
	return lines
}

// uncommentMagicsIn is jupytext's uncomment_magic: each magic line
// outside a string, and the lines a magic continues onto with a
// backslash, lose one comment after their indent.
func uncommentMagicsIn(lines []string, language string) {
	parser := parserFor(language)
	next := false
	for i, line := range lines {
		if !parser.quoted() && (next || isMagicIn(line, language)) {
			lines[i] = unescLine(line, language)
			next = usualLanguageName(language) == "python" && continuationRe().MatchString(line)
		}
		parser.read(line)
	}
}

// unescLine is jupytext's unesc: one comment (and a space) removed after
// the indent.
func unescLine(line, language string) string {
	comment := scriptComments[language]
	body := pyLstrip(line)
	indent := line[:len(line)-len(body)]
	if rest, ok := strings.CutPrefix(body, comment+" "); ok {
		return indent + rest
	}
	if rest, ok := strings.CutPrefix(body, comment); ok && comment != "" {
		return indent + rest
	}
	return line
}

// unescapeCodeStart is jupytext's unescape_code_start for .py: "# # +"
// loses one comment, "# +" (a light script's marker) keeps its own.
func unescapeCodeStart(lines []string, language string) []string {
	parser := parserFor(language)
	for i, line := range lines {
		if !parser.quoted() && escapedCodeStart().MatchString(line) {
			if u := unescLine(line, language); escapedCodeStart().MatchString(u) {
				lines[i] = u
			}
		}
		parser.read(line)
	}
	return lines
}

// optionsToMetadata reads a marker's text after "%%" (jupytext's
// LightScriptCellReader.options_to_metadata).
func (r *cellReader) optionsToMetadata(options string) map[string]any {
	r.jsonMetadata = r.jsonMetadata || isJSONMetadata(options)
	title, md := textToMetadata(options)
	for _, kind := range []string{"markdown", "raw", "md"} {
		code := "[" + kind + "]"
		if strings.Contains(title, code) {
			title = pyStrip(strings.ReplaceAll(title, code, ""))
			md["cell_type"] = kind
			if kind == "md" {
				md["region_name"], md["cell_type"] = "md", "markdown"
			}
			break
		}
	}
	depth := 0
	for strings.HasPrefix(title, "%") {
		depth++
		title = title[1:]
	}
	if depth > 0 {
		md["cell_depth"] = int64(depth)
		title = pyStrip(title)
	}
	if title != "" {
		md["title"] = title
	}
	return md
}

// isJSONMetadata is jupytext's is_json_metadata.
func isJSONMetadata(text string) bool {
	curly, eq := strings.Index(text, "{"), strings.Index(text, "=")
	return curly >= 0 && (eq < 0 || curly < eq)
}

// fenceMark is a markdown code fence: its character and length.
type fenceMark struct {
	char byte
	n    int
}

// openingFence is jupytext's _opening_fence: the fence a line opens, nil
// when none ("```" followed by an info string holding a backtick is
// inline code).
func openingFence(text string) *fenceMark {
	m := codeFenceRe().FindStringSubmatch(text)
	if m == nil || m[1][0] == '`' && strings.Contains(m[2], "`") {
		return nil
	}
	return &fenceMark{m[1][0], len(m[1])}
}

// closedBy is jupytext's _closes_fence: the same character, at least as
// many, and no info string.
func (f fenceMark) closedBy(text string) bool {
	m := codeFenceRe().FindStringSubmatch(text)
	return m != nil && m[1][0] == f.char && len(m[1]) >= f.n && pyStrip(m[2]) == ""
}

// closedLater says whether a line of r.lines from index from on, with
// comment uncommented, closes f. Jupytext asks it of every line after
// the opening one, to the end of the script; the longest closing fence
// of each character from each line on, made once per comment, answers it
// without reading them again.
func (r *cellReader) closedLater(from int, comment string, f fenceMark) bool {
	tables, ok := r.closers[comment]
	if !ok {
		n := len(r.lines)
		tables = [2][]int{make([]int, n+1), make([]int, n+1)}
		for i := n - 1; i >= 0; i-- {
			tables[0][i], tables[1][i] = tables[0][i+1], tables[1][i+1]
			m := codeFenceRe().FindStringSubmatch(uncommentPrefix(r.lines[i], comment))
			if m == nil || pyStrip(m[2]) != "" {
				continue
			}
			k := 0
			if m[1][0] == '~' {
				k = 1
			}
			tables[k][i] = max(tables[k][i], len(m[1]))
		}
		if r.closers == nil {
			r.closers = map[string][2][]int{}
		}
		r.closers[comment] = tables
	}
	k := 0
	if f.char == '~' {
		k = 1
	}
	return tables[k][min(from, len(r.lines))] >= f.n
}

// pyTruthy is Python's bool() of a metadata value.
func pyTruthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case json.Number:
		return v != "0"
	case float64:
		return v != 0
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}
