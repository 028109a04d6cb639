package notebook

import "strconv"

// LanguageInfo is a notebook's metadata.language_info: what a kernel says
// about its language in kernel_info_reply, which nbclient writes into the
// notebook after a run. nbconvert reads it (file_extension for --to script,
// pygments_lexer for highlighting).
type LanguageInfo struct {
	Name, Version, Mimetype, FileExtension string
	PygmentsLexer, NbconvertExporter       string
	CodemirrorMode                         string
	CodemirrorVersion                      int
}

// PythonLanguageInfo is ipykernel's language_info for Python version.
func PythonLanguageInfo(version string) LanguageInfo {
	return LanguageInfo{Name: "python", Version: version, Mimetype: "text/x-python",
		FileExtension: ".py", PygmentsLexer: "ipython3", NbconvertExporter: "python",
		CodemirrorMode: "ipython", CodemirrorVersion: 3}
}

// SetLanguageInfo writes li as metadata.language_info, replacing what was
// there, unless it already names the same language and version (so a re-run
// leaves the file's bytes alone).
func (nb *Notebook) SetLanguageInfo(li LanguageInfo) {
	md := nb.root.get("metadata")
	old := md.get("language_info")
	if name, _ := old.get("name").str(); name == li.Name {
		if v, _ := old.get("version").str(); v == li.Version {
			return
		}
	}
	mode := newObject()
	mode.set("name", newString(li.CodemirrorMode))
	mode.set("version", newRaw(kindNumber, strconv.Itoa(li.CodemirrorVersion)))
	info := newObject()
	info.set("codemirror_mode", mode)
	info.set("file_extension", newString(li.FileExtension))
	info.set("mimetype", newString(li.Mimetype))
	info.set("name", newString(li.Name))
	info.set("nbconvert_exporter", newString(li.NbconvertExporter))
	info.set("pygments_lexer", newString(li.PygmentsLexer))
	info.set("version", newString(li.Version))
	if md == nil || md.kind != kindObject {
		md = newObject()
	} else {
		md = md.shallowCopy()
	}
	md.set("language_info", info)
	root := nb.root.shallowCopy()
	root.set("metadata", md)
	nb.root = root
}
