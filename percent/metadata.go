package percent

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// This file ports Jupytext's reading of a "# %%" line's options
// (jupytext/cell_metadata.py: text_to_metadata with allow_title,
// parse_key_equal_value, relax_json_loads, is_active), so a marker means
// here what it means to Jupytext.

// badMetadataKey is where Jupytext keeps option text it cannot read.
const badMetadataKey = "incorrectly_encoded_metadata"

var (
	// Compiled on first use: at init they would cost every evalhost start.
	identifierRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_.]+[a-zA-Z0-9_.]*$`) })
	metadataKeyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_.@/-]+$`) })
)

// markerOptions splits the text after "%%" into a title and metadata:
// "Title key=value key2", or "Title {JSON}". Text that is not metadata
// stays in the title.
func markerOptions(text string) (string, map[string]any) {
	title, md := textToMetadata(text)
	bad, ok := md[badMetadataKey].(string)
	if !ok {
		return title, md
	}
	// Jupytext keeps it to write it back; to a reader it is title.
	delete(md, badMetadataKey)
	if isJSONMetadata(text) {
		return pyStrip(text), md // not JSON after all: a title with braces
	}
	return pyStrip(title + " " + bad), md
}

// textToMetadata is Jupytext's text_to_metadata with allow_title: the
// title, then metadata as key=value pairs or a JSON object. Text it cannot
// read is metadata's incorrectly_encoded_metadata.
func textToMetadata(text string) (string, map[string]any) {
	text = pyStrip(text)
	curly, eq := strings.Index(text, "{"), strings.Index(text, "=")
	if curly >= 0 && (eq < 0 || curly < eq) {
		title := pyStrip(text[:curly])
		v, err := parseLiteral(text[curly:])
		if md, ok := v.(map[string]any); err == nil && ok {
			return title, md
		}
		return title, map[string]any{badMetadataKey: pyStrip(text[curly:])}
	}
	var words []string
	if eq >= 0 {
		words = strings.Split(text[:eq], " ")
		for len(words) > 0 && words[len(words)-1] == "" {
			words = words[:len(words)-1]
		}
		if len(words) > 0 {
			words = words[:len(words)-1] // the key before the "="
		}
	} else {
		words = strings.Split(text, " ")
	}
	for len(words) > 0 && (pyStrip(words[len(words)-1]) == "" || strings.HasPrefix(words[len(words)-1], ".")) {
		words = words[:len(words)-1]
	}
	title := strings.Join(words, " ")
	return title, parseKeyEqualValue(text[len(title):])
}

// parseKeyEqualValue reads "key1=value1 key2 key3=value3" from the right,
// as Jupytext's parse_key_equal_value does.
func parseKeyEqualValue(text string) map[string]any {
	text = pyStrip(text)
	if text == "" {
		return map[string]any{}
	}
	lastSpace := strings.LastIndex(text, " ")
	if !strings.HasPrefix(text, "--") && identifierRe().MatchString(text[lastSpace+1:]) {
		md := map[string]any{}
		if lastSpace > 0 {
			md = parseKeyEqualValue(text[:lastSpace])
		}
		if _, ok := md[text[lastSpace+1:]]; !ok {
			md[text[lastSpace+1:]] = nil // the text before says it first (dict.update)
		}
		return md
	}
	eq := len(text)
	for {
		eq = strings.LastIndex(text[:eq], "=")
		if eq < 0 {
			return map[string]any{badMetadataKey: text}
		}
		prevSpace := strings.LastIndex(pyRstrip(text[:eq]), " ")
		key := pyStrip(text[prevSpace+1 : eq])
		if !metadataKeyRe().MatchString(key) {
			continue
		}
		value, err := parseLiteral(text[eq+1:])
		if err != nil {
			continue // the value may hold an "=": try a longer one
		}
		md := map[string]any{}
		if prevSpace > 0 {
			md = parseKeyEqualValue(text[:prevSpace])
		}
		md[key] = value
		return md
	}
}

// isActive is Jupytext's is_active: is a cell with this metadata code in
// the notebook (ext "ipynb") or in the script (ext "py")? A frozen cell is
// active in the notebook only; an "active-ipynb-py" tag or an
// active="ipynb,py" option lists where it is.
func isActive(ext string, md map[string]any, def bool) bool {
	if rc, ok := md["run_control"].(map[string]any); ok && rc["frozen"] == true {
		return ext == "ipynb"
	}
	for _, tag := range tagsOf(md) {
		if strings.HasPrefix(tag, "active-") {
			return slices.Contains(strings.Split(tag, "-"), ext)
		}
	}
	active, ok := md["active"]
	if !ok {
		return def
	}
	s, _ := active.(string)
	return slices.Contains(regexp.MustCompile(`[.,]`).Split(s, -1), ext)
}

// tagsOf returns metadata's "tags" when it is a list of strings.
func tagsOf(md map[string]any) []string {
	list, _ := md["tags"].([]any)
	var tags []string
	for _, t := range list {
		if s, ok := t.(string); ok {
			tags = append(tags, s)
		}
	}
	return tags
}
