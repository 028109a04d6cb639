package percent

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Header is what a script's Jupytext YAML header says ("# ---" lines
// around a "jupyter:" section, after an optional shebang and coding line).
type Header struct {
	// Jupytext is set when the script has a "jupyter:" header, which only
	// Jupytext writes.
	Jupytext bool
	// CommentMagics is jupyter.jupytext.comment_magics as jupytext reads
	// it, by Python truthiness (PyYAML's "no", 0, null and "" are false):
	// false when the writer left magics uncommented. Nil when the header
	// does not say.
	CommentMagics *bool
	// FormatName is jupyter.jupytext.text_representation.format_name
	// ("percent", "light", ...); "" when the header does not say.
	FormatName string
	// Lines is how many lines the header (with its shebang and coding
	// line and one blank line after it) takes.
	Lines int
	// Err is set when the "jupyter:" section is not YAML or holds a value
	// of a type jupytext cannot use (which jupytext refuses); the other
	// fields then say nothing of it.
	Err error
}

var (
	// Compiled on first use: at init they would cost every evalhost start.
	codingRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-_.a-zA-Z0-9]+)`) })
	yamlFenceRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^---\s*$`) })
	jupyterKeyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^jupyter\s*:\s*$`) })
)

// ReadHeader reads the header at the top of a script, as Jupytext's
// header_to_metadata_and_cell does. A script without one gives the zero
// Header.
func ReadHeader(lines []string) Header {
	var yamlLines []string
	started, inJupyter, jupyter, jupyterLine := false, false, false, 0
	for i, line := range lines {
		line = strings.TrimRight(line, "\r\n")
		if i == 0 && strings.HasPrefix(line, "#!") {
			continue
		}
		if (i == 0 || (i == 1 && !codingRe().MatchString(lines[0]))) && codingRe().MatchString(line) {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			return Header{}
		}
		text := strings.TrimPrefix(strings.TrimPrefix(line, "#"), " ")
		if yamlFenceRe().MatchString(text) {
			if !started {
				started = true
				continue
			}
			h := Header{Jupytext: jupyter, Lines: i + 1}
			if h.Jupytext {
				h.CommentMagics, h.FormatName, h.Err = jupytextOptions(yamlLines, jupyterLine)
			}
			if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "" {
				h.Lines++
			}
			return h
		}
		if !started && strings.TrimSpace(text) != "" {
			return Header{}
		}
		switch {
		case jupyterKeyRe().MatchString(text):
			if !jupyter {
				jupyterLine = i + 1
			}
			inJupyter, jupyter = true, true
		case text != "" && text[0] != ' ' && text[0] != '\t':
			inJupyter = false
		}
		if inJupyter {
			yamlLines = append(yamlLines, text)
		}
	}
	return Header{}
}

// jupytextOptions reads jupyter.jupytext.comment_magics and
// text_representation.format_name from the header's "jupyter:" section,
// which starts at line first. A section that is not YAML is an error, as
// Jupytext's yaml.safe_load of it is, and so is a value of a type jupytext
// cannot use (readSection).
func jupytextOptions(section []string, first int) (commentMagics *bool, formatName string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(section, "\n")), &doc); err != nil {
		return nil, "", fmt.Errorf("the \"jupyter:\" section from line %d: %w", first, err)
	}
	v, err := readSection(&doc)
	if err != nil {
		return nil, "", fmt.Errorf("the \"jupyter:\" section from line %d: %w", first, err)
	}
	return v.commentMagics, v.formatName, nil
}

// ErrNotPercent: a script whose Jupytext header names another format
// (light, sphinx, hydrogen, ...), whose cells and metadata this package
// would read wrongly.
var ErrNotPercent = errors.New("a script of another Jupytext format")

// ErrBadHeader: a script whose Jupytext header is not YAML or holds a
// value of a type jupytext cannot use, which jupytext refuses, and whose
// format and options this package cannot tell.
var ErrBadHeader = errors.New("a script whose Jupytext header jupytext cannot read")

// CheckFormat returns an error wrapping ErrNotPercent when src's Jupytext
// header names a format other than percent, or ErrBadHeader when its
// "jupyter:" section is not YAML or holds a value jupytext cannot use; nil for a percent script and for one
// without a header (plain Python, VS Code's or Spyder's # %%).
func CheckFormat(src string) error {
	h := ReadHeader(splitLines(src))
	if h.Err != nil {
		return fmt.Errorf("%w: %w; fix the header or remove it (jupytext refuses it too)", ErrBadHeader, h.Err)
	}
	if h.FormatName == "" || h.FormatName == "percent" {
		return nil
	}
	return fmt.Errorf("%w: its header says format_name: %s, and evalhost reads the percent format (# %%%%); convert it with \"jupytext --to py:percent\"", ErrNotPercent, h.FormatName)
}
