package percent

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// NotebookCell is one cell of the notebook jupytext makes of a percent
// script.
type NotebookCell struct {
	Type string // "code", "markdown" or "raw"
	// Source is the cell's text as the notebook has it: markdown
	// uncommented, magics uncommented, lines joined by "\n" with no
	// final one.
	Source   string
	Metadata map[string]any // never nil; values as encoding/json reads JSON, ints int64
	Line     int            // 1-based line of its marker (of its first line without one)
}

// Notebook is what jupytext.read makes of a percent script: its cells and
// the notebook's metadata (the header's "jupyter:" section, and what
// jupytext records in metadata.jupytext).
type Notebook struct {
	Cells    []NotebookCell
	Metadata map[string]any
	// Format is the script's Jupytext format: "percent", or "hydrogen"
	// (percent cells whose magics are not commented out).
	Format string
}

// ErrNoCells: a script with no cell marker whose header names no format,
// which is no percent notebook (jupytext reads it as a light script).
var ErrNoCells = errors.New("a script with no cell marker")

// ReadNotebook reads a percent script into the notebook jupytext 1.19
// reads it into (jupytext.read of a .py file, the conversion of
// "jupytext --to ipynb"): code, markdown and raw cells with jupytext's
// source and metadata, the header's metadata. See the package's contract
// for what it refuses and how it differs from jupytext.
func ReadNotebook(src string) (*Notebook, error) {
	lines := pySplitLines(src)
	h, err := readNotebookHeader(lines)
	if !utf8.ValidString(src) && !errors.Is(err, ErrEncoding) {
		err = notUTF8(src) // a coding line's refusal says more: what the bytes are
	}
	if err != nil {
		return nil, err
	}
	format, err := scriptFormat(h.md, lines, h.jupyter)
	if err != nil {
		return nil, err
	}
	md := h.md
	defaultLanguage := defaultLanguage(md)
	j := md.section("jupytext")
	r := &cellReader{lines: lines[h.lines:], defaultLanguage: defaultLanguage, commentMagics: format == "percent"}
	if v, ok := j["comment_magics"]; ok {
		r.commentMagics = pyTruthy(v)
	}
	nb := &Notebook{Format: format}
	if h.cell != nil {
		nb.Cells = append(nb.Cells, *h.cell)
	}
	for at := 0; at < len(r.lines); {
		cell, next, err := r.read(at)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", h.lines+at+1, err)
		}
		cell.Line += h.lines
		if err := checkCellOptions(cell); err != nil {
			return nil, err
		}
		nb.Cells = append(nb.Cells, cell)
		at = next
	}
	if err := setCellLanguages(md, nb.Cells, customMagics(j)); err != nil {
		return nil, err
	}
	if err := updateMetadataFilters(md, h.jupyter, nb.Cells); err != nil {
		return nil, err
	}
	if r.jsonMetadata {
		if _, ok := md.jupytext()["cell_metadata_json"]; !ok {
			md.jupytext()["cell_metadata_json"] = true
		}
	}
	if err := rearrangeJupytextMetadata(md); err != nil {
		return nil, err
	}
	tr, ok := md.jupytext()["text_representation"].(map[string]any)
	if !ok {
		tr = map[string]any{}
		md.jupytext()["text_representation"] = tr
	}
	tr["extension"], tr["format_name"] = ".py", format
	nb.Metadata = md.values
	return nb, nil
}

var (
	// guess_format's patterns for .py. Compiled on first use.
	guessMarkerRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^#( %%|%%)$|^#( %%|%%)[` + pySpace + `]|^#( <codecell>| In\[[0-9 ]*\]:?)`)
	})
)

// scriptFormat is the Jupytext format jupytext reads the script in: the
// header's (text_representation, or jupytext.formats' .py entry), or
// the one its content suggests (guess_format): percent, or hydrogen when
// a magic is left uncommented. Another format is ErrNotPercent; no
// marker and no format named is ErrNoCells.
func scriptFormat(md *metadata, lines []string, header bool) (string, error) {
	name, err := formatFromMetadata(md)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	if name == "" {
		if _, ok := md.section("jupytext")["text_representation"]; ok {
			name = "light" // format_name_for_ext's default for .py
		}
	}
	if name == "" {
		markers, magics := 0, 0
		var parser stringParser
		for _, line := range lines {
			parser.read(line)
			if parser.quoted() {
				continue
			}
			if guessMarkerRe().MatchString(line) {
				markers++
			}
			if !strings.HasPrefix(line, "#") && isMagicOutsideCell(line) {
				magics++
			}
		}
		switch {
		case markers > 0 && magics > 0:
			name = "hydrogen"
		case markers > 0:
			name = "percent"
		case header:
			return "", fmt.Errorf("%w, whose Jupytext header names no format: jupytext reads it as a light script (\"# +\" cells); "+
				"convert it with \"jupytext --to py:percent\", or run it whole with \"evalhost run\"", ErrNotPercent)
		default:
			return "", fmt.Errorf("%w and no Jupytext header is a plain script, not a notebook", ErrNoCells)
		}
	}
	if name != "percent" && name != "hydrogen" {
		return "", notPercent(Header{FormatName: name})
	}
	return name, nil
}

// formatFromMetadata is read_format_from_metadata for .py: the header's
// text_representation format, else the format of its .py in formats.
func formatFromMetadata(md *metadata) (string, error) {
	j := md.section("jupytext")
	tr, _ := j["text_representation"].(map[string]any)
	ext, _ := tr["extension"].(string)
	if name, _ := tr["format_name"].(string); strings.HasSuffix(ext, ".py") && name != "" {
		return name, nil
	}
	formats, err := longFormats(j["formats"], nil)
	if err != nil {
		return "", err
	}
	for _, f := range formats {
		if f.ext == ".py" {
			return f.name, nil
		}
	}
	return "", nil
}

// defaultLanguage is default_language_from_metadata_and_ext for .py.
func defaultLanguage(md *metadata) string {
	lang, _ := md.section("jupytext")["main_language"].(string)
	if lang == "" {
		lang, _ = md.section("kernelspec")["language"].(string)
	}
	switch {
	case lang == "":
		lang = "python"
	case lang == "R" || lang == "sas":
		return lang
	case strings.HasPrefix(lang, "C++"):
		return "c++"
	}
	return strings.ReplaceAll(strings.ToLower(lang), "#", "sharp")
}

// customMagics are the header's custom_cell_magics and
// custom_language_magics.
func customMagics(j map[string]any) []string {
	var out []string
	for _, key := range []string{"custom_cell_magics", "custom_language_magics"} {
		s, _ := j[key].(string)
		out = append(out, strings.Split(s, ",")...)
	}
	return out
}

// setCellLanguages is set_main_and_cell_language: the main language
// recorded when no kernel says it, and a cell of another language that
// is a cell magic ("%%R") gets that magic back as its first line.
func setCellLanguages(md *metadata, cells []NotebookCell, custom []string) error {
	main := defaultLanguage(md)
	if _, ok := md.section("kernelspec")["language"]; !ok && len(cells) > 0 {
		md.jupytext()["main_language"] = main
	}
	for i := range cells {
		c := &cells[i]
		v, ok := c.Metadata["language"]
		if !ok {
			continue
		}
		lang, _ := v.(string)
		switch {
		case lang == main:
			delete(c.Metadata, "language")
		case usualLanguageName(lang) == main:
		case jupyterLanguages[lang] || slices.Contains(custom, lang):
			delete(c.Metadata, "language")
			magic := "%%"
			if main == "csharp" {
				magic = "#!"
			}
			head := magic + lang
			if args, ok := c.Metadata["magic_args"]; ok {
				delete(c.Metadata, "magic_args")
				head += " " + fmt.Sprint(args)
			}
			c.Source = head + "\n" + c.Source
		}
	}
	return nil
}

// defaultNotebookMetadata is _DEFAULT_NOTEBOOK_METADATA.
var defaultNotebookMetadata = []string{"jupytext", "kernelspec", "kernel_info", "orphan", "tocdepth"}

// updateMetadataFilters is update_metadata_filters: without a "jupyter:"
// section the notebook's metadata is filtered out and its cells' keep
// the keys the script has; with one, the filters are completed with them.
func updateMetadataFilters(md *metadata, jupyter bool, cells []NotebookCell) error {
	keys := map[string]bool{}
	for _, c := range cells {
		for k := range c.Metadata {
			keys[k] = true
		}
	}
	// jupytext lists a Python set, in no order it can repeat: sorted here.
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	j := md.jupytext
	switch cf, ok := md.section("jupytext")["cell_metadata_filter"]; {
	case !jupyter:
		j()["notebook_metadata_filter"] = "-all"
		if _, ok := j()["cell_metadata_filter"]; !ok {
			j()["cell_metadata_filter"] = metadataFilter{additional: sorted, allExcluded: true}.String()
		}
	case ok:
		f := filterOf(cf)
		f.excluded = slices.DeleteFunc(f.excluded, func(k string) bool { return keys[k] })
		if !f.allAdditional {
			listed := setOf(f.additional) // a set: a wide header's lists took quadratic time
			for _, k := range sorted {
				if !listed[k] {
					f.additional = append(f.additional, k)
				}
			}
		}
		j()["cell_metadata_filter"] = f.String()
	default:
		v, ok := md.section("jupytext")["notebook_metadata_filter"]
		s, isText := v.(string)
		if ok && !isText {
			return fmt.Errorf("%w: jupytext.notebook_metadata_filter is %v, where jupytext reads a string", ErrBadHeader, v)
		}
		var filter []string
		for _, k := range strings.Split(s, ",") {
			if k != "" {
				filter = append(filter, k)
			}
		}
		if slices.Contains(filter, "all") || slices.Contains(filter, "-all") {
			return nil
		}
		listed := setOf(filter)
		for _, k := range md.order {
			if !slices.Contains(defaultNotebookMetadata, k) && !listed[k] && !listed["-"+k] {
				filter = append(filter, k)
				listed[k] = true
			}
		}
		if len(filter) > 0 {
			j()["notebook_metadata_filter"] = strings.Join(filter, ",")
		}
	}
	return nil
}

// rearrangeJupytextMetadata is rearrange_jupytext_metadata: older
// headers' keys moved into the jupytext section, the filters written as
// strings, formats in jupytext's short form.
func rearrangeJupytextMetadata(md *metadata) error {
	for _, key := range []string{"nbrmd_formats", "nbrmd_format_version"} {
		if v, ok := md.pop(key); ok {
			md.set(strings.Replace(key, "nbrmd", "jupytext", 1), v)
		}
	}
	j := md.section("jupytext")
	if j == nil {
		j = map[string]any{}
	}
	if v, ok := md.pop("jupytext_formats"); ok {
		j["formats"] = v
	}
	if v, ok := md.pop("jupytext_format_version"); ok {
		j["text_representation"] = map[string]any{"format_version": v}
	}
	for _, key := range []string{"main_language", "encoding", "executable"} {
		if v, ok := md.pop(key); ok {
			j[key] = v
		}
	}
	if filters, ok := j["metadata_filter"]; ok {
		delete(j, "metadata_filter")
		if f, ok := filters.(map[string]any); ok {
			if v, ok := f["notebook"]; ok {
				j["notebook_metadata_filter"] = v
			}
			if v, ok := f["cells"]; ok {
				j["cell_metadata_filter"] = v
			}
		}
	}
	for _, level := range []string{"notebook_metadata_filter", "cell_metadata_filter"} {
		if f, ok := j[level].(map[string]any); ok {
			j[level] = filterOf(f).String()
		}
	}
	tr, _ := j["text_representation"].(map[string]any)
	if v, _ := tr["jupytext_version"].(string); strings.HasPrefix(v, "0.") {
		if formats, ok := j["formats"].(string); ok && formats != "" {
			list := strings.Split(formats, ",")
			for i, f := range list {
				if strings.LastIndex(f, ".") > 0 {
					list[i] = "." + f
				}
			}
			j["formats"] = strings.Join(list, ",")
		}
	}
	if pyTruthy(j["formats"]) {
		formats, err := longFormats(j["formats"], md)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadHeader, err)
		}
		short := make([]string, len(formats))
		for i, f := range formats {
			short[i] = f.short()
		}
		j["formats"] = strings.Join(short, ",")
	}
	if len(j) > 0 {
		md.set("jupytext", j)
	}
	return nil
}

// notUTF8 is ErrEncoding naming the first line of src that is not UTF-8
// and its first such byte.
func notUTF8(src string) error {
	at := 0
	for at < len(src) {
		r, size := utf8.DecodeRuneInString(src[at:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		at += size
	}
	return fmt.Errorf("%w: line %d is not UTF-8 (byte 0x%02x)", ErrEncoding, strings.Count(src[:at], "\n")+1, src[at])
}

// setOf is the set of list's strings.
func setOf(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, s := range list {
		set[s] = true
	}
	return set
}
