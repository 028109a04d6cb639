package sessions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// An editable install by setuptools 64+ (its default, "lenient" mode, for
// a flat layout) puts no path line in site-packages: its .pth imports
// __editable___NAME_finder, whose install() appends to sys.meta_path a
// finder that maps top-level names to the project's source
// (MAPPING = {'mypkg': '/src/proj/mypkg'}) and namespace packages to
// their directories (NAMESPACES). A later import line (a .pth sorted
// after it) or sitecustomize that python finds nowhere on sys.path is
// then read from there at start, as a module in site-packages would be.

// judgeEditables judges, for each setuptools editable finder in a site
// directory (its real path; entries read) that an import line imports,
// where its maps lead the names an import line may import, and
// sitecustomize and usercustomize: as judgeImports judges a package in
// site-packages. A refusal is a *pathLineError. seen: as for judgeImports.
func judgeEditables(site string, entries []os.DirEntry, names map[string]bool, safe *trustdir.Safe, seen map[string]bool) error {
	for _, e := range entries {
		n := e.Name()
		m, ok := strings.CutSuffix(n, ".py")
		if !ok || !names[m] || !strings.HasPrefix(m, "__editable___") || !strings.HasSuffix(m, "_finder") {
			continue
		}
		// Read where judgeImports judged it, which no one else may change.
		finder := filepath.Join(site, n)
		b, err := os.ReadFile(finder)
		if err != nil {
			return err
		}
		for name, paths := range editableMaps(string(b)) {
			if !mapped(name, names) {
				continue
			}
			for _, p := range paths {
				if err := judgeMapped(finder, p, names, safe, seen); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// mapped: an import line may import the mapped name (each part of a
// dotted one), or python imports it at start anyway.
func mapped(name string, names map[string]bool) bool {
	if isCustomize(name) {
		return true
	}
	for _, part := range strings.Split(name, ".") {
		if !names[part] {
			return false
		}
	}
	return true
}

// judgeMapped judges p, where the finder maps a name: a package directory
// as judgeImports judges one in site-packages (its __init__ and the names
// in it); else a module, whose forms (p with any suffix: the finder tries
// them all) are judged in p's directory; missing, as a missing path
// line is.
func judgeMapped(finder, p string, names map[string]bool, safe *trustdir.Safe, seen map[string]bool) error {
	if !filepath.IsAbs(p) {
		return nil // setuptools writes absolute paths
	}
	p = filepath.Clean(p)
	dir := p
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		if err != nil {
			if err := judgeMissing(pathLine{pth: finder, path: p, editable: true}); err != nil {
				return err
			}
		}
		dir = filepath.Dir(p)
		names = map[string]bool{strings.SplitN(filepath.Base(p), ".", 2)[0]: true}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || dir == filepath.Dir(dir) {
			return nil
		}
	}
	refuse := func(err error) error {
		if err == nil {
			return nil
		}
		return &pathLineError{Pth: finder, Path: p, Err: err, Editable: true}
	}
	found, err := trustdir.CodeDir(filepath.Dir(dir), filepath.Base(dir), safe)
	if err != nil || seen[found.Real] {
		return refuse(err)
	}
	if dir == p {
		seen[found.Real] = true // a package: the names in it are all judged
	}
	entries, err := os.ReadDir(found.Real)
	if err != nil {
		return refuse(err)
	}
	return refuse(judgeImports(found.Real, entries, names, safe, seen))
}

// editableMaps reads the MAPPING and NAMESPACES of a setuptools editable
// finder's source (each one line of a dict's repr: {'a': '/p'} and
// {'ns': ['/p', '/q']}) as name to paths; what it cannot read is left out.
func editableMaps(src string) map[string][]string {
	maps := map[string][]string{}
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "MAPPING") && !strings.HasPrefix(line, "NAMESPACES") {
			continue
		}
		_, rest, ok := strings.Cut(line, "{")
		for ok {
			var k string
			if k, rest, ok = pyString(rest); !ok {
				break
			}
			var vs []string
			if vs, rest, ok = pyStrings(strings.TrimLeft(rest, " :")); ok {
				maps[k] = append(maps[k], vs...)
			}
		}
	}
	return maps
}

// pyStrings reads a string literal, or a list of them, that s begins with.
func pyStrings(s string) ([]string, string, bool) {
	rest, list := strings.CutPrefix(s, "[")
	if !list {
		v, rest, ok := pyString(s)
		return []string{v}, rest, ok
	}
	var vs []string
	for {
		v, r, ok := pyString(rest)
		if !ok {
			break
		}
		vs, rest = append(vs, v), r
	}
	rest, ok := strings.CutPrefix(strings.TrimLeft(rest, " ,"), "]")
	return vs, rest, ok
}

// pyString reads the Python string literal s begins with (after spaces or
// a comma), as repr writes one, and returns its value and the rest.
// Escapes repr writes: \\ \' \" \n \r \t \xhh \uhhhh \Uhhhhhhhh, and
// \udc80-\udcff for a byte of a file name that is not UTF-8.
func pyString(s string) (string, string, bool) {
	s = strings.TrimLeft(s, " ,")
	if s == "" || s[0] != '\'' && s[0] != '"' {
		return "", s, false
	}
	q := s[0]
	var b []byte
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == q {
			return string(b), s[i+1:], true
		}
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i++; i >= len(s) {
			break
		}
		width := 0
		switch s[i] {
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'x':
			width = 2
		case 'u':
			width = 4
		case 'U':
			width = 8
		default:
			b = append(b, s[i])
		}
		if width == 0 {
			continue
		}
		if i+width >= len(s) {
			break
		}
		r, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32)
		if err != nil {
			break
		}
		i += width
		if r >= 0xdc80 && r <= 0xdcff {
			b = append(b, byte(r-0xdc00)) // surrogateescape
		} else {
			b = utf8.AppendRune(b, rune(r))
		}
	}
	return "", s, false
}
