package percent

import (
	"strings"

	"github.com/evalhost/evalhost/sessions"
)

// Cell is one cell of a percent-format script.
type Cell struct {
	sessions.Cell
	Line int // 1-based line of the cell's first code line, for messages
}

// Split splits a percent-format script (Jupytext, VS Code, Spyder) on
// "# %%" lines. "# %% [sh]" (or [bash], [shell]) starts a shell cell,
// "# %% [markdown]" and "# %% [md]" cells are prose and are skipped, other
// text after the marker is the cell's title. Text before the first marker
// is a cell of its own when it holds code; empty cells are dropped.
func Split(src, defaultLang string) []Cell {
	var cells []Cell
	cur := Cell{Cell: sessions.Cell{Language: defaultLang}, Line: 1}
	var body []string
	skip := false
	preamble := true // text before the first marker
	flush := func() {
		code := strings.Join(body, "")
		if preamble && onlyComments(body) {
			skip = true // a header comment, not a cell to number
		}
		preamble = false
		if !skip && strings.TrimSpace(code) != "" {
			cur.Code = strings.TrimRight(code, "\n") + "\n"
			cells = append(cells, cur)
		}
		body = body[:0]
	}
	lineNo := 0
	for len(src) > 0 {
		line, rest, found := strings.Cut(src, "\n")
		if found {
			line += "\n"
		}
		src = rest
		lineNo++
		if lang, title, kind, ok := parseMarker(line, defaultLang); ok {
			flush()
			cur = Cell{Cell: sessions.Cell{Language: lang, Title: title}, Line: lineNo + 1}
			skip = kind == "markdown"
			continue
		}
		body = append(body, line)
	}
	flush()
	return cells
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

// parseMarker recognises "# %%" optionally followed by a title and a
// "[kind]" tag; "# %%%" and "#%%" variants are accepted as Jupytext does.
func parseMarker(line, defaultLang string) (lang, title, kind string, ok bool) {
	t := strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(t, "# %%"):
		t = t[len("# %%"):]
	case strings.HasPrefix(t, "#%%"):
		t = t[len("#%%"):]
	default:
		return "", "", "", false
	}
	t = strings.TrimLeft(t, "%") // "# %%%" is a nested cell (Spyder), still a cell
	if t != "" && t[0] != ' ' && t[0] != '\t' && t[0] != '[' {
		return "", "", "", false // "# %%bash" and the like are not markers
	}
	t = strings.TrimSpace(t)
	lang = defaultLang
	if open := strings.Index(t, "["); open >= 0 {
		if end := strings.Index(t[open:], "]"); end > 0 {
			kind = strings.ToLower(strings.TrimSpace(t[open+1 : open+end]))
			t = strings.TrimSpace(t[:open] + t[open+end+1:])
		}
	}
	switch named, isLang := sessions.ParseLanguage(kind); {
	case isLang:
		lang = named
	case kind == "code":
		lang = sessions.LangPython
	case kind == "markdown" || kind == "md":
		kind = "markdown"
	}
	return lang, t, kind, true
}
