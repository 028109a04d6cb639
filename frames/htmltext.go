package frames

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLToText turns an HTML fragment (a DataFrame table, a styled message)
// into the text a browser shows of it, in one pass of the tokenizer:
// entities decoded; the content of script, style, title and the elements
// a browser shows only without scripts or frames dropped, as are comments;
// whitespace collapsed as HTML collapses it, except in pre, textarea,
// xmp, listing and plaintext; each block (p, div, li, h1, a table row…)
// on its own lines, br a line break; a table's rows as lines whose cells
// are separated by tabs (an empty first cell, a DataFrame's index header,
// keeps its tab, so the columns line up; a table in a cell goes on in the
// cell, and the row's later cells keep theirs). Lines carry no trailing spaces
// or tabs, and the text neither starts nor ends with a blank line. It is
// not sanitised: an entity (&#27;) decodes to the control it names.
func HTMLToText(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	w := htmlText{b: make([]byte, 0, len(s)/4)}
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return w.String()
		case html.TextToken:
			if !w.skip {
				w.text(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			w.start(tagAtom(z.Raw()))
		case html.EndTagToken:
			w.end(tagAtom(z.Raw()))
		}
	}
}

// htmlText is the text of an HTML fragment as it is made.
type htmlText struct {
	b     []byte
	line  bool  // a line break is due before the next text
	space bool  // a space is due before the next text (collapsed whitespace)
	skip  bool  // inside an element whose content is not shown
	pre   int   // depth of preformatted elements
	lead  bool  // drop a newline that starts the text right after <pre>
	cells int   // cells begun in the current table row
	outer []int // cells of the enclosing tables' rows, for a table in a cell
	cell  bool  // nothing written since a cell began: no line break yet
}

func (w *htmlText) start(a atom.Atom) {
	w.lead = false
	switch {
	case a == atom.Br:
		w.newline()
	case a == atom.Td || a == atom.Th:
		// A cell's blocks do not break its row; the row's line break
		// comes before its first cell, empty or not.
		if w.cells > 0 {
			w.line = false
			w.b = append(w.b, '\t')
		} else {
			w.flushLine()
		}
		w.cells++
		w.space, w.cell = false, true
	case a == atom.Tr:
		w.line, w.cells = true, 0
	case a == atom.Table:
		w.line = true
		w.outer = append(w.outer, w.cells)
		w.cells = 0
	case hidden(a):
		// The tokenizer reads what follows as one raw text, up to the
		// element's end tag.
		w.skip = true
	case preformatted(a):
		w.line, w.lead = true, true
		w.pre++
	case block(a):
		w.line = true
	}
}

func (w *htmlText) end(a atom.Atom) {
	w.skip, w.lead = false, false // a hidden element's end tag is the next tag after it
	switch {
	case a == atom.Td || a == atom.Th:
		w.line, w.space, w.cell = false, false, false
	case a == atom.Tr:
		w.line, w.cells = true, 0
	case a == atom.Table:
		w.line = true
		if n := len(w.outer); n > 0 { // not for a stray end tag
			w.cells, w.outer = w.outer[n-1], w.outer[:n-1]
		}
	case preformatted(a):
		w.pre = max(w.pre-1, 0)
		w.line = true
	case block(a):
		w.line = true
	}
}

// text adds the text of a text token.
func (w *htmlText) text(t []byte) {
	if w.lead {
		w.lead = false
		t = bytes.TrimPrefix(t, []byte{'\n'})
	}
	if w.pre > 0 {
		if len(t) > 0 {
			w.flush()
			w.b = append(w.b, t...)
		}
		return
	}
	for len(t) > 0 {
		n := spaces(t)
		if n > 0 {
			w.space, t = true, t[n:]
			continue
		}
		n = word(t)
		w.flush()
		w.b, t = append(w.b, t[:n]...), t[n:]
	}
}

// flush writes the line break or space due before text.
func (w *htmlText) flush() {
	w.flushLine()
	if w.space && len(w.b) > 0 {
		if c := w.b[len(w.b)-1]; c != '\n' && c != '\t' {
			w.b = append(w.b, ' ')
		}
	}
	w.space = false
}

func (w *htmlText) flushLine() {
	if w.line && !w.cell && len(w.b) > 0 && w.b[len(w.b)-1] != '\n' {
		w.newline()
	}
	w.line, w.cell = false, false
}

// newline ends the line, its trailing spaces and tabs dropped, and at
// most one blank line follows another line.
func (w *htmlText) newline() {
	w.b = bytes.TrimRight(w.b, " \t")
	if len(w.b) > 0 && !bytes.HasSuffix(w.b, []byte("\n\n")) {
		w.b = append(w.b, '\n')
	}
	w.line, w.space = false, false
}

func (w *htmlText) String() string {
	return string(bytes.TrimRight(w.b, " \t\n"))
}

// spaces is the length of the HTML whitespace at the start of t.
func spaces(t []byte) int {
	for i, c := range t {
		if c != ' ' && c != '\n' && c != '\t' && c != '\f' && c != '\r' {
			return i
		}
	}
	return len(t)
}

// word is the length of the text before the first HTML whitespace in t.
func word(t []byte) int {
	for i, c := range t {
		if c == ' ' || c == '\n' || c == '\t' || c == '\f' || c == '\r' {
			return i
		}
	}
	return len(t)
}

// tagAtom is the element of a tag token, read from the token's raw text
// ("<td>", "</TD >", "<tr style=…>") as the tokenizer reads its name: up to
// white space, "/" or ">". Tokenizer.TagName would do, but it allocates a
// copy of every name (a DataFrame's table is a tag per 10 bytes); no
// element it tells apart has a name longer than the buffer.
func tagAtom(raw []byte) atom.Atom {
	var buf [12]byte
	n := 0
	for _, c := range raw[min(len(raw), 1):] {
		switch {
		case c == '/' && n == 0:
			continue // the one of an end tag
		case c == ' ' || c == '\n' || c == '\t' || c == '\f' || c == '\r' || c == '/' || c == '>':
			return atom.Lookup(buf[:n])
		case n == len(buf):
			return 0
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}

// hidden reports whether a browser shows nothing of the element's content
// (the tokenizer reads that content as raw text).
func hidden(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Title, atom.Noscript, atom.Noembed, atom.Noframes, atom.Iframe:
		return true
	}
	return false
}

func preformatted(a atom.Atom) bool {
	switch a {
	case atom.Pre, atom.Textarea, atom.Xmp, atom.Listing, atom.Plaintext:
		return true
	}
	return false
}

// block reports whether the element starts and ends a line.
func block(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Caption,
		atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Div, atom.Dl, atom.Dt,
		atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Header,
		atom.Hgroup, atom.Hr, atom.Legend, atom.Li, atom.Main, atom.Nav, atom.Ol,
		atom.P, atom.Section, atom.Summary, atom.Table, atom.Tbody, atom.Tfoot,
		atom.Thead, atom.Ul:
		return true
	}
	return false
}
