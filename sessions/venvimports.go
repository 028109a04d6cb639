package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// A .pth line that starts "import " or "import\t" is exec()ed whole by
// site.py at every start (Lib/site.py, addpackage): an editable install's
// "import __editable___x_finder; __editable___x_finder.install()",
// virtualenv's "import _virtualenv", setuptools' "...; __import__(
// '_distutils_hack').add_shim()". What it imports is found on sys.path as
// it is then, site-packages itself above all, so those modules run at
// start as the .pth does, and are judged as it is.

// pthImports adds to names every name an import line of the .pth text b
// may import. The line is Python, exec()ed whole ("import a, b; import c",
// "import a.b", "from a import b", "__import__('a')"), so it is not parsed:
// every identifier in it, in code or in a string, is taken as a name it
// may import, a superset ("os", "environ"). Its lines are split at \n and
// \r, which every python splits at and no encoding a locale may have
// writes inside a character, and one is read whole when python may run a
// line that begins in it (runsImport).
func pthImports(b []byte, names map[string]bool) {
	for _, wide := range strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if !runsImport(wide) {
			continue
		}
		for _, id := range strings.FieldsFunc(wide, notIdentifier) {
			names[id] = true
		}
	}
}

// runsImport reports whether "import " or "import\t", which begin a line
// site.py exec()s and are ASCII in any encoding it may read the .pth in,
// is where a line may begin in wide: at its start, or after what python
// 3.13 may split lines at. That is str.splitlines' \v, \f, \x1c-\x1e,
// \x85, U+2028 and U+2029, in the locale's encoding when the text is not
// UTF-8: so after any byte that is not ASCII (a byte-order mark, 0x85 in
// ISO 8859, U+2028 in UTF-8 ends in 0xa8) and after GB18030's four bytes
// for \x85, U+2028 and U+2029, which end in an ASCII digit.
func runsImport(wide string) bool {
	for i := 0; i < len(wide); i++ {
		rest := wide[i:]
		if !strings.HasPrefix(rest, "import ") && !strings.HasPrefix(rest, "import\t") {
			continue
		}
		if i == 0 {
			return true
		}
		before := wide[:i]
		switch c := before[len(before)-1]; {
		case c >= 0x80, c == '\v', c == '\f', c >= 0x1c && c <= 0x1e:
			return true
		}
		for _, sep := range gb18030Breaks {
			if strings.HasSuffix(before, sep) {
				return true
			}
		}
	}
	return false
}

// gb18030Breaks are GB18030's \x85, U+2028 and U+2029.
var gb18030Breaks = []string{"\x81\x30\x81\x35", "\x81\x36\xa6\x35", "\x81\x36\xa6\x36"}

// lineBreak: r ends a line for str.splitlines, or is a byte that is not
// UTF-8, which site.py then decodes in the locale's encoding (where 0x85
// may be NEL). pthPaths splits path lines so.
func lineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029, utf8.RuneError:
		return true
	}
	return false
}

func notIdentifier(r rune) bool {
	return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}

// judgeImports judges what in dir (a site directory or a package in it,
// its real path; entries read) importing one of names would run: NAME.py,
// NAME.pyc, NAME.*.so, __pycache__/NAME.*.pyc, and a package NAME/ with
// its __init__ in those forms and, in it, the same for names again (a
// dotted or a from import's submodules). The rest of a package, what those
// modules import in turn, is not judged (a walk). sitecustomize and
// usercustomize are judgeStartFiles', but for their cached bytecode, here.
// seen holds the directories judged, so a link loop ends.
func judgeImports(dir string, entries []os.DirEntry, names map[string]bool, safe *trustdir.Safe, seen map[string]bool) error {
	for _, e := range entries {
		n := e.Name()
		m, plain := moduleOf(n)
		switch {
		case n == "__pycache__":
			if err := judgeCached(dir, names, safe); err != nil {
				return err
			}
		case m == "" || isCustomize(m) || !names[m] && m != "__init__":
		case !plain:
			if _, err := trustdir.CodeFile(dir, n, safe); err != nil {
				return err
			}
		default:
			if err := judgePackage(dir, n, e, names, safe, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// judgePackage judges dir/n, named as a module is but for a suffix: a
// package when it is a directory, else nothing import finds (a file of
// that name is passed over), but for a link, judged where it leads.
func judgePackage(dir, n string, e os.DirEntry, names map[string]bool, safe *trustdir.Safe, seen map[string]bool) error {
	if fi, err := os.Stat(filepath.Join(dir, n)); err != nil || !fi.IsDir() {
		if e.Type()&os.ModeSymlink == 0 || err != nil {
			return nil
		}
		_, err := trustdir.CodeFile(dir, n, safe)
		return err
	}
	pkg, err := trustdir.CodeDirIn(dir, n, safe)
	if err != nil || seen[pkg.Real] {
		return err
	}
	seen[pkg.Real] = true
	entries, err := os.ReadDir(pkg.Real)
	if err != nil {
		return err
	}
	return judgeImports(pkg.Real, entries, names, safe, seen)
}

// judgeCached judges dir/__pycache__ and the bytecode in it of names, of
// __init__, sitecustomize and usercustomize: python runs NAME.TAG.pyc in
// place of NAME.py when their stamps agree, which whoever may write it can
// make them.
func judgeCached(dir string, names map[string]bool, safe *trustdir.Safe) error {
	cache, err := trustdir.CodeDirIn(dir, "__pycache__", safe)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(cache.Real)
	if err != nil {
		return err
	}
	for _, e := range entries {
		m, rest, _ := strings.Cut(e.Name(), ".")
		if (names[m] || m == "__init__" || isCustomize(m)) && strings.HasSuffix("."+rest, ".pyc") {
			if _, err := trustdir.CodeFile(cache.Real, e.Name(), safe); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleOf is the module a directory entry named n may be imported as, ""
// for none: NAME for NAME.py, NAME.pyc and NAME.*.so (the suffixes
// importlib's FileFinder tries on POSIX), and for NAME itself (plain), a
// package when it is a directory.
func moduleOf(n string) (m string, plain bool) {
	m, rest, dotted := strings.Cut(n, ".")
	switch {
	case !dotted:
		return m, true
	case rest == "py" || rest == "pyc" || rest == "so" || strings.HasSuffix(rest, ".so"):
		return m, false
	}
	return "", false
}
