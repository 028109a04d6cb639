package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// A .pth line that is neither blank, a comment nor an import line names a
// directory (or a zip) that site.py appends to sys.path at start when it
// exists (a relative line is joined to the site directory as site.py
// names it, through the venv's links, then cleaned: ".." climbs the
// names, not where a link leads). sitecustomize, and
// what the import lines import, are looked for there too, after the site
// directories: a sitecustomize.py in another user's directory a .pth
// names runs at every start of an interpreter that has none of its own
// (pyenv's, python.org's).

// pathLine is a path a .pth names.
type pathLine struct {
	pth      string // the .pth, its real path
	path     string // what the line names, absolute and clean
	editable bool   // pth is an editable install's finder, path where it maps a name
}

// pthPaths adds to lines the paths the path lines of the .pth text b (the
// file at pth, in the site directory python names by each of sites) name,
// its lines split as pthImports splits them.
func pthPaths(b []byte, sites []string, pth string, lines []pathLine) []pathLine {
	text := strings.TrimPrefix(string(b), "\ufeff")
	seen := map[string]bool{}
	add := func(line string) {
		if strings.HasPrefix(line, "#") || strings.TrimFunc(line, pySpace) == "" ||
			strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import\t") {
			return
		}
		line = strings.TrimRightFunc(line, pySpace)
		for _, site := range sites {
			p := line
			if !filepath.IsAbs(p) {
				p = filepath.Join(site, p)
			}
			if p = filepath.Clean(p); !seen[p] {
				seen[p] = true
				lines = append(lines, pathLine{pth: pth, path: p})
			}
		}
	}
	for _, l := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		add(l)
	}
	for _, sep := range gb18030Breaks {
		text = strings.ReplaceAll(text, sep, "\n")
	}
	for _, l := range strings.FieldsFunc(text, lineBreak) {
		add(l)
	}
	return lines
}

// pySpace is str.isspace: unicode.IsSpace and U+001C-U+001F, which
// site.py's strip and rstrip take off a line too.
func pySpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// judgePathLines judges what the .pth path lines name, as a site
// directory's start files are judged: a directory as code is (the way to
// it too), with its sitecustomize and usercustomize and what names may
// import from it (judgeImports); a file (a zip import reads) as code in a
// directory judged so. One that is missing must not be one another user
// could make. A refusal is a *pathLineError. seen: as for judgeImports.
func judgePathLines(lines []pathLine, names map[string]bool, safe *trustdir.Safe, seen map[string]bool) error {
	for _, l := range lines {
		err := judgePathLine(l, names, safe, seen)
		var pe *pathLineError
		switch {
		case err == nil:
		case errors.As(err, &pe):
			return err
		default:
			return &pathLineError{Pth: l.pth, Path: l.path, Err: err}
		}
	}
	return nil
}

func judgePathLine(l pathLine, names map[string]bool, safe *trustdir.Safe, seen map[string]bool) error {
	fi, err := os.Stat(l.path)
	switch {
	case err != nil:
		// site.py's os.path.exists says no, for now: whoever may put a
		// directory there (in place of a file of theirs in the way
		// (ENOTDIR), or in a directory of theirs the user may not search
		// (EACCES)) makes it yes.
		return judgeMissing(l)
	case !fi.IsDir():
		parent := filepath.Dir(l.path)
		dir, err := trustdir.CodeDir(filepath.Dir(parent), filepath.Base(parent), safe)
		if err != nil {
			return err
		}
		_, err = trustdir.CodeFile(dir.Real, filepath.Base(l.path), safe)
		return err
	}
	dir, err := trustdir.CodeDir(filepath.Dir(l.path), filepath.Base(l.path), safe)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir.Real)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if isCustomize(e.Name()) {
			if err := judgeTree(dir.Real, e.Name(), safe); err != nil {
				return err
			}
		}
	}
	return judgeImports(dir.Real, entries, names, safe, seen)
}

// judgeMissing refuses a path line naming what does not exist where
// another user could make it: in a directory others may write (/tmp,
// sticky or not) or another user owns, or in place of a file another user
// owns (what stops the path now: in a sticky directory its owner may
// replace it with a directory); and one that is, or goes through, a
// symbolic link to what does not exist, wherever it leads. The way there
// is judged as trustdir.Way judges it.
func judgeMissing(l pathLine) error {
	in := l.path // a link to nothing, or missing
	for {
		if _, err := os.Lstat(in); err == nil || in == filepath.Dir(in) {
			break
		}
		in = filepath.Dir(in)
	}
	found, err := trustdir.Way(in)
	if errors.Is(err, fs.ErrNotExist) {
		// A link to what does not exist, wherever that is.
		return &pathLineError{Pth: l.pth, Path: l.path, In: in, Why: "is a symbolic link to what does not exist, which whoever may make that", Editable: l.editable}
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(found.Real)
	if err != nil {
		return nil
	}
	why := ""
	if uid, ok := trustdir.Owner(fi); ok && uid != 0 && uid != os.Geteuid() {
		why = fmt.Sprintf("uid %d owns", uid)
	}
	if fi.IsDir() && fi.Mode().Perm()&0o002 != 0 {
		why = "everyone may write"
	}
	if why == "" {
		return nil
	}
	return &pathLineError{Pth: l.pth, Path: l.path, In: in, Why: why, Editable: l.editable}
}

// pathLineError refuses a venv whose .pth names a path python would look
// for code in at start that another user controls (Err says why), or that
// does not exist in a directory another user may add to (In, Why), where
// whoever makes it gets their sitecustomize run.
type pathLineError struct {
	Pth, Path string
	Err       error  // why what Path names is refused; nil when missing
	In, Why   string // for a missing Path: where it would be made, and who may ("everyone may write", "uid N owns")
	// Editable: Pth is an editable install's finder module, which maps
	// a name python imports at start to Path.
	Editable bool
}

func (e *pathLineError) Error() string {
	names := "names"
	if e.Editable {
		names = "maps a module python imports at start to"
	}
	if e.Err != nil {
		return fmt.Sprintf("%s %s %s, where python looks for code at start: %s", trustdir.Shown(e.Pth), names, trustdir.Shown(e.Path), shownErr(e.Err))
	}
	return fmt.Sprintf("%s %s %s, which does not exist, in %s, which %s: whoever makes it gets code run at python's start",
		trustdir.Shown(e.Pth), names, trustdir.Shown(e.Path), trustdir.Shown(e.In), e.Why)
}

func (e *pathLineError) Unwrap() error { return e.Err }

// fix says what to do: drop the line, or make the directory, or mend what
// it names.
func (e *pathLineError) fix() string {
	drop := "remove that line from " + trustdir.Shown(e.Pth)
	if e.Editable {
		drop = "uninstall the editable install whose finder is " + trustdir.Shown(e.Pth)
	}
	if e.Err == nil {
		return fmt.Sprintf("%s if it is stale, or make %s yourself", drop, trustdir.Shown(e.Path))
	}
	do := drop + " if you do not need it"
	var te *trustdir.Error
	if errors.As(e.Err, &te) {
		do += "; or " + venvAdvice(te)
	}
	return do
}
