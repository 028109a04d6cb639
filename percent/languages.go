package percent

import (
	"slices"
	"strings"
)

// jupytext's language tables (jupytext/languages.py, 1.19), for the
// languages a percent script's cells may name (language="R").

// scriptComments is _COMMENT: each script language's line comment.
var scriptComments = map[string]string{
	"python": "#", "coconut": "#", "R": "#", "julia": "#", "c++": "//", "scheme": ";;", "clojure": ";;",
	"bash": "#", "powershell": "#", "q": "/", "matlab": "%", "wolfram language": "(*", "idl": ";",
	"javascript": "//", "typescript": "//", "scala": "//", "rust": "//", "robotframework": "#", "csharp": "//",
	"fsharp": "//", "sos": "#", "java": "//", "groovy": "//", "sage": "#", "ocaml": "(*", "haskell": "--",
	"tcl": "#", "maxima": "/*", "gnuplot": "#", "stata": "//", "sas": "/*", "jenner": "/*", "xonsh": "#",
	"logtalk": "%", "lua": "--", "go": "//",
}

// jupyterLanguages is _JUPYTER_LANGUAGES: the cell magics that are
// languages ("%%bash"), the script languages and C#'s and F#'s names.
var jupyterLanguages = func() map[string]bool {
	m := map[string]bool{"c#": true, "f#": true, "cs": true, "fs": true}
	for _, l := range strings.Split("R bash sh python python2 python3 coconut javascript js perl html latex markdown pypy "+
		"ruby script svg matlab octave idl robotframework sas spark sql cython haskell tcl gnuplot", " ") {
		m[l] = true
	}
	m["wolfram language"] = true
	for l := range scriptComments {
		m[l] = true
	}
	return m
}()

// usualLanguageName is jupytext's usual_language_name.
func usualLanguageName(language string) string {
	l := strings.ToLower(language)
	switch {
	case l == "r":
		return "R"
	case strings.HasPrefix(l, "c++"):
		return "c++"
	case l == "octave":
		return "matlab"
	case l == "cs" || l == "c#":
		return "csharp"
	case l == "fs" || l == "f#":
		return "fsharp"
	}
	return l
}

// parserFor is jupytext's StringParser(language) as a stringParser.
func parserFor(language string) stringParser {
	if language == "python" {
		return stringParser{}
	}
	return stringParser{lang: &stringLang{comment: scriptComments[language], r: language == "R"}}
}

// isMagicIn is jupytext's is_magic(line, language, explicitly_code=True),
// the only way a percent cell reads it: Python's magics and escapes, and
// for another script language with a "#" comment the "%" magics (a
// language with another comment has its own, which no Python notebook's
// cell holds: none here).
func isMagicIn(line, language string) bool {
	language = usualLanguageName(language)
	if language == "python" {
		return isMagic(line)
	}
	if scriptComments[language] != "#" || slices.Contains([]string{"octave", "matlab", "sas", "jenner", "logtalk"}, language) {
		return false
	}
	switch {
	case magicForceEscRe().MatchString(line):
		return true
	case magicNotEscRe().MatchString(line):
		return false
	}
	return magicRe().MatchString(line)
}
