package percent

import (
	"regexp"
	"strings"
	"sync"
)

// This file ports how Jupytext reads back the magics it comments out in
// Python scripts (jupytext/magics.py: is_magic, uncomment_magic, and
// stringparser.py), so "# %matplotlib inline" and "# !pip install x" run
// as magics again.

var (
	// Compiled on first use: at init they would cost every evalhost start.
	magicForceEscRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(# |#)*(%|%%|%%%)[a-zA-Z](.*)#\s*escape`) })
	magicNotEscRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(# |#)*(%|%%|%%%)[a-zA-Z](.*)#\s*noescape`) })
	magicRe         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(# |#)*(%|%%|%%%)[a-zA-Z]`) })
	helpOrShellRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(# |#)*\s*(\?|!)\s*[A-Za-z.~$\\/{}]`) })
	magicAssignRe   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(# |#)*\s*([a-zA-Z_][a-zA-Z_$0-9]*)\s*=\s*(%|%%|%%%|!)[a-zA-Z](.*)`)
	})
	magicHelpRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(# )*[^\s]*\?\s*$`) })
	magicCommandRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(# |#)*(cat|cd|cp|mv|rm|rmdir|mkdir|copy|ddir|echo|ls|ldir|ren)($|\s$|\s[^=,])`)
	})
	continuationRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`.*\\\s*$`) })
)

// isMagic says whether a Python line is a (possibly commented) Jupyter
// magic, shell escape or help request, in an explicitly marked cell.
func isMagic(line string) bool { return isPythonMagic(line, true) }

// isMagicOutsideCell is isMagic outside an explicitly marked cell, where
// "x?" is no help request (jupytext's is_magic, explicitly_code=False).
func isMagicOutsideCell(line string) bool { return isPythonMagic(line, false) }

func isPythonMagic(line string, explicitly bool) bool {
	switch {
	case magicForceEscRe().MatchString(line):
		return true
	case magicNotEscRe().MatchString(line):
		return false
	}
	return magicRe().MatchString(line) || helpOrShellRe().MatchString(line) ||
		magicAssignRe().MatchString(line) || explicitly && magicHelpRe().MatchString(line) || magicCommandRe().MatchString(line)
}

// uncommentMagics removes one "# " from each magic line outside a string,
// and from the lines a magic continues onto with a backslash.
func uncommentMagics(lines []string) {
	var sp stringParser
	next := false
	for i, line := range lines {
		if !sp.quoted() && (next || isMagic(line)) {
			lines[i] = unescapeLine(line)
			next = continuationRe().MatchString(line)
		}
		sp.read(line)
	}
}

// unescapeLine removes one "# " (or "#") after the indent.
func unescapeLine(line string) string {
	body := strings.TrimLeft(line, " \t")
	indent := line[:len(line)-len(body)]
	if rest, ok := strings.CutPrefix(body, "# "); ok {
		return indent + rest
	}
	if rest, ok := strings.CutPrefix(body, "#"); ok {
		return indent + rest
	}
	return line
}

// uncommentLines removes the "# " (or "#") prefix of every line, as
// Jupytext shows a cell that is active in the notebook only.
func uncommentLines(lines []string) {
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "# "); ok {
			lines[i] = rest
		} else if rest, ok := strings.CutPrefix(l, "#"); ok {
			lines[i] = rest
		}
	}
}

// stringParser tells whether the next line of Python starts inside a
// string (Jupytext's StringParser): a "# %%" there is text, not a marker.
// Its zero value reads Python; lang set, another language.
type stringParser struct {
	single, triple byte // the open quote, 0 when none
	lang           *stringLang
}

// stringLang is how jupytext's StringParser reads a language other than
// Python: its line comment ("" when jupytext knows none) and whether it
// is R, whose quotes are never triple and run on past the end of a line.
type stringLang struct {
	comment string
	r       bool
}

func (p *stringParser) quoted() bool { return p.single != 0 || p.triple != 0 }

func (p *stringParser) read(line string) {
	comment, r := "#", false
	if p.lang != nil {
		comment, r = p.lang.comment, p.lang.r
	}
	if !p.quoted() && comment != "" && strings.HasPrefix(pyLstrip(line), comment) {
		return
	}
	tripleStart := -1
	for i := 0; i < len(line); i++ {
		c := line[i]
		if p.single == 0 && p.triple == 0 && comment != "" && strings.HasPrefix(line[i:], comment) {
			break
		}
		if c != '"' && c != '\'' {
			continue
		}
		if i > 0 && line[i-1] == '\\' {
			continue
		}
		if p.single == c {
			p.single = 0
			continue
		}
		if p.single != 0 || r {
			continue
		}
		if i >= 2 && line[i-2] == c && line[i-1] == c && i >= tripleStart+3 {
			if p.triple == c {
				p.triple, tripleStart = 0, i
				continue
			}
			if p.triple != 0 {
				continue
			}
			p.triple, tripleStart = c, i
			continue
		}
		if p.triple != 0 {
			continue
		}
		p.single = c
	}
	if !r {
		p.single = 0 // a line ends a one-line string
	}
}
