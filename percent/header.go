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
	// fields still say what the rest of a YAML section says.
	Err error
	// FormatUnknown: Err leaves the script's format untold: the section
	// is not YAML, or its format_name is no string.
	FormatUnknown bool
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
				v, err := jupytextOptions(yamlLines, jupyterLine)
				h.CommentMagics, h.FormatName, h.FormatUnknown, h.Err = v.commentMagics, v.formatName, v.formatUnknown, err
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
func jupytextOptions(section []string, first int) (headerValues, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(section, "\n")), &doc); err != nil {
		return headerValues{formatUnknown: true}, fmt.Errorf("the \"jupyter:\" section from line %d is not YAML (%w)", first, err)
	}
	v, err := readSection(&doc)
	if err != nil {
		return v, fmt.Errorf("the \"jupyter:\" section from line %d: %w", first, err)
	}
	return v, nil
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
	return notPercent(h)
}

// notPercent is the ErrNotPercent error of a header naming another format.
func notPercent(h Header) error {
	if h.FormatName == "" || h.FormatName == "percent" {
		return nil
	}
	return fmt.Errorf("%w: its header says format_name: %s, and evalhost reads the percent format (# %%%%); convert it with \"jupytext --to py:percent\"", ErrNotPercent, h.FormatName)
}

// CheckRun is CheckFormat for a program that runs the script as python3
// runs the file (evalhost run), to which the header is comments: a header
// that names another format is still refused (ErrNotPercent), but one
// jupytext cannot read (CheckFormat's ErrBadHeader) is not. warning then
// says what jupytext refuses, one line; whole says the header leaves the
// format untold (Header.FormatUnknown), so the file is to run whole, as
// python3 runs it (Options.Whole), not cut into cells of a format it may
// not be; otherwise the cells are read by what the rest of the header
// says.
func CheckRun(src string) (warning string, whole bool, err error) {
	h := ReadHeader(splitLines(src))
	if err := notPercent(h); err != nil {
		return "", false, err
	}
	switch {
	case h.Err == nil:
		return "", false, nil
	case h.FormatUnknown:
		return fmt.Sprintf("has a Jupytext header jupytext refuses (%v), which leaves its format untold: it runs whole, as python3 runs it, "+
			"not cell by cell; fix the header to run its cells", h.Err), true, nil
	}
	return fmt.Sprintf("has a Jupytext header jupytext refuses (%v); python3 reads it as comments, and so does run: fix it for jupytext", h.Err), false, nil
}
