package percent

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// This file ports what jupytext does with a header's jupytext.formats
// (jupytext/formats.py: long_form_one_format, short_form_one_format,
// auto_ext_from_metadata) and its metadata filters
// (jupytext/metadata_filter.py): the notebook's metadata is jupytext's.

// textFormat is one of jupytext.formats: "prefix/suffix.ext:format_name".
type textFormat struct {
	prefix, suffix, ext, name string
	hasPrefix, hasSuffix      bool
}

// notebookExtensions is jupytext's NOTEBOOK_EXTENSIONS.
var notebookExtensions = strings.Split(".ipynb .md .markdown .Rmd .py .coco .R .r .jl .cpp .ss .clj .scm .sh .ps1 .q .m "+
	".wolfram .pro .js .ts .scala .rs .robot .resource .cs .fsx .fs .sos .java .groovy .sage .ml .hs .tcl .mac .gp .do "+
	".sas .jenner .xsh .lgt .logtalk .lua .go .qmd .myst .mystnb .mnb", " ")

// formatNames is jupytext's _VALID_FORMAT_NAMES.
var formatNames = []string{"hydrogen", "light", "marimo", "markdown", "myst", "nomarker", "pandoc", "percent", "quarto",
	"rmarkdown", "sphinx", "spin"}

// scriptExtensions is _SCRIPT_EXTENSIONS' extensions and languages, in
// its order (the first of a language is its "auto" extension).
var scriptExtensions = [][2]string{{".py", "python"}, {".coco", "coconut"}, {".R", "R"}, {".r", "R"}, {".jl", "julia"},
	{".cpp", "c++"}, {".ss", "scheme"}, {".clj", "clojure"}, {".scm", "scheme"}, {".sh", "bash"}, {".ps1", "powershell"},
	{".q", "q"}, {".m", "matlab"}, {".wolfram", "wolfram language"}, {".pro", "idl"}, {".js", "javascript"},
	{".ts", "typescript"}, {".scala", "scala"}, {".rs", "rust"}, {".robot", "robotframework"}, {".resource", "robotframework"},
	{".cs", "csharp"}, {".fsx", "fsharp"}, {".fs", "fsharp"}, {".sos", "sos"}, {".java", "java"}, {".groovy", "groovy"},
	{".sage", "sage"}, {".ml", "ocaml"}, {".hs", "haskell"}, {".tcl", "tcl"}, {".mac", "maxima"}, {".gp", "gnuplot"},
	{".do", "stata"}, {".sas", "sas"}, {".jenner", "jenner"}, {".xsh", "xonsh"}, {".lgt", "logtalk"}, {".logtalk", "logtalk"},
	{".lua", "lua"}, {".go", "go"}}

// longFormat is long_form_one_format; md, when not nil, resolves "auto".
func longFormat(s string, md *metadata) (textFormat, error) {
	common := map[string]string{"notebook": "ipynb", "rmarkdown": "Rmd", "quarto": "qmd", "marimo": "py", "markdown": "md",
		"script": "auto", "c++": "cpp", "myst": "md:myst", "pandoc": "md:pandoc"}
	if c, ok := common[strings.ToLower(s)]; ok {
		s = c
	}
	var f textFormat
	if i := strings.LastIndex(s, "/"); i > 0 {
		f.prefix, f.hasPrefix, s = s[:i], true, s[i+1:]
	}
	var ext string
	switch i := strings.LastIndex(s, ":"); {
	case i >= 0:
		ext, f.name = s[:i], s[i+1:]
		if f.name == "bare" {
			f.name = "nomarker"
		}
	case s == "" || strings.Contains(s, ".") || slices.Contains(notebookExtensions, "."+s) || s == "auto":
		ext = s
	case slices.Contains(formatNames, s):
		f.name = s
	default:
		return f, fmt.Errorf("'%s' is not a notebook extension nor a notebook format", s)
	}
	if i := strings.LastIndex(ext, "."); i > 0 {
		e := path.Ext(ext) // os.path.splitext: the last dot's, not a leading one's
		f.suffix, f.hasSuffix, ext = ext[:len(ext)-len(e)], true, e
	}
	if !strings.HasPrefix(ext, ".") {
		ext = "." + ext
	}
	if ext == ".auto" && md != nil {
		if ext = autoExtension(md); ext == "" {
			return f, fmt.Errorf("no language information in this notebook to replace 'auto' with")
		}
	}
	f.ext = ext
	if f.name != "" && !slices.Contains(formatNames, f.name) {
		return f, fmt.Errorf("%s is not a valid format name", f.name)
	}
	if !slices.Contains(notebookExtensions, ext) && ext != ".auto" {
		return f, fmt.Errorf("extension '%s' is not a notebook extension", ext)
	}
	return f, nil
}

// longFormats is long_form_multiple_formats: a comma-separated string or
// a list of them.
func longFormats(v any, md *metadata) ([]textFormat, error) {
	var items []string
	switch v := v.(type) {
	case string:
		for _, s := range strings.Split(v, ",") {
			if s != "" {
				items = append(items, s)
			}
		}
	case []any:
		for _, s := range v {
			str, ok := s.(string)
			if !ok {
				return nil, fmt.Errorf("jupytext.formats holds %v, no string", s)
			}
			items = append(items, str)
		}
	default:
		if pyTruthy(v) {
			return nil, fmt.Errorf("jupytext.formats is %v, no string or list", v)
		}
	}
	var out []textFormat
	for _, s := range items {
		f, err := longFormat(s, md)
		if err != nil {
			return nil, fmt.Errorf("jupytext.formats: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// short is short_form_one_format.
func (f textFormat) short() string {
	s := strings.TrimPrefix(f.ext, ".")
	if f.hasSuffix {
		s = f.suffix + f.ext
	}
	if f.hasPrefix {
		s = f.prefix + "/" + s
	}
	if f.name != "" && (!slices.Contains([]string{".md", ".markdown", ".Rmd"}, f.ext) || f.name == "pandoc" || f.name == "myst") {
		s += ":" + f.name
	}
	return s
}

// autoExtension is auto_ext_from_metadata: the script extension of the
// notebook's language, "" when it says none.
func autoExtension(md *metadata) string {
	ext, _ := md.section("language_info")["file_extension"].(string)
	lang, _ := md.section("kernelspec")["language"].(string)
	if ext == ".py" && lang == "sage" {
		ext = ".sage"
	}
	if ext == "" {
		if lang == "" {
			lang, _ = md.section("jupytext")["main_language"].(string)
		}
		for _, e := range scriptExtensions {
			if lang != "" && usualLanguageName(lang) == usualLanguageName(e[1]) {
				ext = e[0]
				break
			}
		}
	}
	switch ext {
	case ".r":
		return ".R"
	case ".fs":
		return ".fsx"
	case ".resource":
		return ".robot"
	case ".C":
		return ".cpp"
	}
	return ext
}

// metadataFilter is a filter as metadata_filter_as_dict makes it: a list
// of keys, or all of them.
type metadataFilter struct {
	additional, excluded       []string
	allAdditional, allExcluded bool
	hasAdditional, hasExcluded bool
}

// filterOf is metadata_filter_as_dict.
func filterOf(v any) metadataFilter {
	var f metadataFilter
	switch v := v.(type) {
	case nil:
	case bool:
		if v {
			f.allAdditional, f.hasAdditional = true, true
		} else {
			f.allExcluded, f.hasExcluded = true, true
		}
	case map[string]any:
		f.additional, f.allAdditional, f.hasAdditional = filterSection(v, "additional")
		f.excluded, f.allExcluded, f.hasExcluded = filterSection(v, "excluded")
	case string:
		for _, key := range strings.Split(v, ",") {
			key = pyStrip(key)
			switch {
			case strings.HasPrefix(key, "-"):
				f.excluded, f.hasExcluded = append(f.excluded, pyStrip(key[1:])), true
			case strings.HasPrefix(key, "+"):
				f.additional, f.hasAdditional = append(f.additional, pyStrip(key[1:])), true
			default:
				f.additional, f.hasAdditional = append(f.additional, key), true
			}
		}
		f.allAdditional, f.additional = allOrKeys(f.additional)
		f.allExcluded, f.excluded = allOrKeys(f.excluded)
	}
	return f
}

func filterSection(m map[string]any, key string) (keys []string, all, has bool) {
	v, has := m[key]
	switch v := v.(type) {
	case string:
		return nil, v == "all", has
	case []any:
		for _, k := range v {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	return keys, false, has
}

func allOrKeys(keys []string) (bool, []string) {
	if slices.Contains(keys, "all") {
		return true, nil
	}
	return false, slices.DeleteFunc(keys, func(k string) bool { return k == "" })
}

// jupytextCellMetadata is _JUPYTEXT_CELL_METADATA: what jupytext writes
// for itself, never in a filter.
var jupytextCellMetadata = []string{"skipline", "noskipline", "cell_marker", "lines_to_next_cell", "lines_to_end_of_cell_marker"}

// String is metadata_filter_as_string.
func (f metadataFilter) String() string {
	var entries []string
	if f.allAdditional {
		entries = []string{"all"}
	} else {
		for _, k := range f.additional {
			if !slices.Contains(jupytextCellMetadata, k) {
				entries = append(entries, k)
			}
		}
	}
	if f.allExcluded {
		entries = append(entries, "-all")
	} else {
		for _, k := range f.excluded {
			entries = append(entries, "-"+k)
		}
	}
	return strings.Join(entries, ",")
}
