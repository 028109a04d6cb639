package percent

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/evalhost/evalhost/sessions"
)

// Cell is one code cell of a percent-format script.
type Cell struct {
	sessions.Cell                // Language, Code, Title, Tags
	Line          int            // 1-based line of the cell's first code line, for messages
	Metadata      map[string]any // the marker's options (Jupytext's cell metadata); nil without a marker
	// NoRun marks a cell of the notebook that does not run (markdown, raw,
	// blank, not active in a notebook), kept, without code, only because
	// it has a tag Options.KeepTagged names: a caller places cells by it
	// (papermill's parameters cell may be markdown) and then drops it.
	NoRun bool
}

// Magics says whether lines Jupytext commented out because they are
// magics ("# %matplotlib inline", "# !pip install x") run as magics.
type Magics int

const (
	// MagicsAuto reads them back when the script has Jupytext's header
	// (and the header does not say comment_magics: false).
	MagicsAuto Magics = iota
	// MagicsOn always reads them back, as Jupytext does.
	MagicsOn
	// MagicsOff leaves them comments, as plain Python does.
	MagicsOff
)

// Options says how a script is read.
type Options struct {
	// Language of cells whose marker names none: sessions.LangPython
	// ("" too) or sessions.LangShell.
	Language string
	Magics   Magics
	// KeepTagged names tags for which a cell that does not run is kept,
	// as a NoRun cell.
	KeepTagged []string
	// Whole reads the script as a plain one, markers and header as the
	// comments they are to python3: one cell (CheckRun's whole).
	Whole bool
}

var (
	// Jupytext's start_code_re, also taking "# %%[sh]" and "#%%%%".
	// Compiled on first use: at init they would cost every evalhost start.
	markerRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#\s*%%(%*)([ \t\f\v\[].*)?$`) })
	// Jupytext's alternative_start_code_re: bare "# <codecell>", "# In[3]:".
	altMarkerRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#\s*(<codecell>|In\[[0-9 ]*\]:?)\s*$`) })
)

// Split is SplitScript with default options but the language.
func Split(src, defaultLang string) []Cell {
	return SplitScript(src, Options{Language: defaultLang})
}

// SplitScript cuts a percent-format script into its code cells, as
// Jupytext reads it into a notebook: markdown, md and raw cells, and cells
// not active in a notebook (an "active-py" tag, active="py", ...) are
// left out; a cell active in the notebook only ("active-ipynb") is
// uncommented; with magics on, commented magics are uncommented.
//
// A script with no cell marker and no Jupytext header is a plain script,
// not a notebook: it is one cell, also when it is empty or holds only
// comments (python3 runs that file, silently), and when it is Python, the
// cell is marked sessions.Cell.Script, so it runs as python3 runs the file
// (no value of an expression shown).
func SplitScript(src string, opt Options) []Cell {
	lang := opt.Language
	if lang == "" {
		lang = sessions.LangPython
	}
	if opt.Whole {
		return []Cell{plainCell(src, lang)}
	}
	lines := splitLines(src)
	header := ReadHeader(lines)
	magics := opt.Magics == MagicsOn || opt.Magics == MagicsAuto && header.Jupytext &&
		(header.CommentMagics == nil || *header.CommentMagics)
	s := splitter{defaultLang: lang, magics: magics, keepTagged: opt.KeepTagged}
	s.cur = chunk{lang: lang, line: header.Lines + 1, preamble: true}
	for i := header.Lines; i < len(lines); i++ {
		line := lines[i]
		if !s.quotes.quoted() {
			if c, ok := parseMarker(line, lang); ok {
				s.marked = true
				s.flush()
				c.line = i + 2
				s.cur, s.quotes = c, stringParser{}
				continue
			}
		}
		if s.cur.lang == sessions.LangPython {
			s.quotes.read(line)
		}
		s.cur.body = append(s.cur.body, line)
	}
	s.flush()
	if !s.marked && !header.Jupytext {
		if len(s.cells) == 0 {
			// python3 runs an empty file, or one of comments, silently:
			// a plain script is its one cell, whatever it holds.
			s.cells = []Cell{{Cell: sessions.Cell{Language: lang, Code: strings.TrimRight(strings.Join(s.cur.body, ""), "\n") + "\n"}, Line: s.cur.line}}
		}
		for i := range s.cells { // one
			s.cells[i].Script = s.cells[i].Language == sessions.LangPython
			if body := strings.Join(s.cur.body, ""); s.cells[i].Script && body != "" {
				// python3 compiles the file as it is: its trailing blank
				// lines and a missing last newline place an error at its end
				s.cells[i].Code = body
			}
		}
	}
	return s.cells
}

// chunk is a marker and the lines up to the next.
type chunk struct {
	lang, title string
	skip        bool // markdown, md or raw
	md          map[string]any
	line        int // of the first body line
	preamble    bool
	body        []string
}

type splitter struct {
	defaultLang string
	magics      bool
	keepTagged  []string
	cur         chunk
	quotes      stringParser
	cells       []Cell
	marked      bool // a cell marker was seen: a notebook, not a plain script
}

func (s *splitter) flush() {
	c := s.cur
	switch {
	case c.preamble && onlyComments(c.body):
		return // a header comment that is not a cell to number
	case c.skip, !isActive("ipynb", c.md, true):
		s.noRun(c) // prose, or a raw cell in the notebook
		return
	case !isActive("py", c.md, true):
		uncommentLines(c.body)
	case s.magics && c.lang == sessions.LangPython:
		uncommentMagics(c.body)
	}
	code := strings.Join(c.body, "")
	if strings.TrimSpace(code) == "" {
		s.noRun(c)
		return
	}
	cell := Cell{Cell: sessions.Cell{Language: c.lang, Title: c.title, Tags: tagsOf(c.md),
		Code: strings.TrimRight(code, "\n") + "\n"}, Line: c.line, Metadata: c.md}
	s.cells = append(s.cells, cell)
}

// noRun keeps c, a cell that does not run, as a NoRun cell when it has a
// tag the caller asked for.
func (s *splitter) noRun(c chunk) {
	tags := tagsOf(c.md)
	if !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(s.keepTagged, t) }) {
		return
	}
	s.cells = append(s.cells, Cell{Cell: sessions.Cell{Language: c.lang, Title: c.title, Tags: tags},
		Line: c.line, Metadata: c.md, NoRun: true})
}

func splitLines(src string) []string {
	var lines []string
	for len(src) > 0 {
		line, rest, found := strings.Cut(src, "\n")
		if found {
			line += "\n"
		}
		lines = append(lines, line)
		src = rest
	}
	return lines
}

// onlyComments reports whether every line is blank or a "#" comment (in
// Python and in sh alike).
func onlyComments(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

// parseMarker recognises a cell marker: "# %%" with optional title,
// "[kind]" and Jupytext options; "# %%%" (Spyder's nested cells), "#%%"
// and Jupytext's "# <codecell>" and "# In[1]:" too. "# %%bash" and the
// like are not markers.
func parseMarker(line, defaultLang string) (chunk, bool) {
	t := strings.TrimRight(line, "\r\n")
	c := chunk{lang: defaultLang, md: map[string]any{}}
	m := markerRe().FindStringSubmatch(t)
	if m == nil {
		return c, altMarkerRe().MatchString(t)
	}
	title, md := markerOptions(m[2])
	c.md = md
	if open := strings.Index(title, "["); open >= 0 {
		if end := strings.Index(title[open:], "]"); end > 0 {
			kind := strings.ToLower(strings.TrimSpace(title[open+1 : open+end]))
			title = strings.TrimSpace(title[:open] + title[open+end+1:])
			switch named, isLang := sessions.ParseLanguage(kind); {
			case isLang:
				c.lang = named
			case kind == "code":
				c.lang = sessions.LangPython
			case kind == "markdown" || kind == "md" || kind == "raw":
				c.skip = true
			}
		}
	}
	c.title = strings.TrimSpace(strings.TrimLeft(title, "%"))
	return c, true
}

// plainCell is the file src as one cell, as python3 runs it: a Python
// one compiled as it is (its trailing blank lines and a missing last
// newline place an error at its end), run as a script (Script).
func plainCell(src, lang string) Cell {
	code := src
	if lang != sessions.LangPython || code == "" {
		code = strings.TrimRight(code, "\n") + "\n"
	}
	return Cell{Cell: sessions.Cell{Language: lang, Code: code, Script: lang == sessions.LangPython}, Line: 1}
}
