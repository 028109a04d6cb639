package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// ModulesEnv names the environment variable that tells runner.py which
// extension modules to run: [ModulesValue] of them.
const ModulesEnv = "EVALHOST_MODULES"

// ModulePlace is a directory extension modules are looked for in: Base/Rel,
// where Base is a directory the user chose (the home, the session's cwd)
// and Rel the directories below it that must be the user's alone
// ("modules", ".evalhost/modules"). Safe, for a project's place, is the
// user's safe directories, which may let another user own it (nil: none).
type ModulePlace struct {
	Base, Rel string
	Safe      *trustdir.Safe
}

// Module is an extension module file [FindModules] judged, held to the
// file it judged: runner.py (and a gateway kernel) runs it only if the file
// it opens at Path is that one (its ID, where files have one: HasID) and
// still safe, owned by the user, root or the Owner it had (whom a safe
// directory let own it).
type Module struct {
	Path string // as found: a place's directory and the file's name
	trustdir.Mark
}

// ModuleRefusedError is a module directory or file [FindModules] will not
// run, and why.
type ModuleRefusedError struct {
	What string          // "extension module dir" or "extension module"
	Path string          // as found
	Err  *trustdir.Error // what is wrong, and where
}

func (e *ModuleRefusedError) Error() string {
	verb := "was"
	if e.What == "extension module dir" {
		verb = "and its modules were"
	}
	return fmt.Sprintf("%s %s %s not loaded: %s, so another user could run code as you; %s",
		e.What, trustdir.Shown(e.Path), verb, e.Err.Reason(), moduleFix(e.Err))
}

func (e *ModuleRefusedError) Unwrap() error { return e.Err }

// moduleFix says what to do about a refused module or directory: for
// another user's, the safe directory that would let it be theirs, beside
// taking it over.
func moduleFix(e *trustdir.Error) string {
	at := trustdir.ShellQuote(e.At)
	trust := ""
	if t := e.Trust(); t != "" {
		trust = "; or " + t
	}
	switch {
	case e.Problem == trustdir.Writable || e.Problem == trustdir.OpenToAll:
		return "if you trust what is in it, run: " + e.Fix()
	case e.Problem == trustdir.Owned && e.Role != trustdir.Above:
		return fmt.Sprintf("remove it, or if you trust it, make it yours: chown -R $(id -u) %s && chmod -R go-w %s", at, at) + trust
	case e.Problem == trustdir.LinkOwned:
		return "remove the link, or if you trust where it points, make one of your own in its place" + trust
	case e.Role == trustdir.Above && e.Trust() != "":
		return e.Trust()
	case e.Role == trustdir.Above:
		return "keep extension modules under directories no other user controls"
	case e.Problem == trustdir.Replaced:
		return "if you changed it yourself, start again"
	}
	return "remove it"
}

// FindModules lists the extension modules to run at an interpreter's
// start: the *.py files (not hidden) of each place's directory, in name
// order, a later place's overriding an earlier one's of the same name. A
// place whose directory is missing is skipped. Each directory is judged
// by [trustdir.CodeDir] and each file by [trustdir.CodeFile]: one that
// anyone but the user and root could change is not run, and refused says
// why (a [*ModuleRefusedError]; an unreadable directory is an error too).
// A refused file does not hide an earlier place's module of its name.
func FindModules(places []ModulePlace) (mods []Module, refused []error) {
	chosen := map[string]Module{}
	for _, pl := range places {
		dir := filepath.Join(pl.Base, pl.Rel)
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			continue // the usual case: one call
		}
		found, err := trustdir.CodeDir(pl.Base, pl.Rel, pl.Safe)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				refused = append(refused, refusal("extension module dir", dir, err))
			}
			continue
		}
		entries, err := os.ReadDir(found.Real)
		if err != nil {
			refused = append(refused, fmt.Errorf("extension module dir %s unreadable: %w", trustdir.Shown(dir), err))
			continue
		}
		for _, ent := range entries {
			name := ent.Name()
			if !strings.HasSuffix(name, ".py") || strings.HasPrefix(name, ".") {
				continue
			}
			path := filepath.Join(dir, name)
			f, err := trustdir.CodeFile(found.Real, name, pl.Safe)
			if err != nil {
				refused = append(refused, refusal("extension module", path, err))
				continue
			}
			chosen[name] = Module{Path: path, Mark: f.Mark()}
		}
	}
	names := make([]string, 0, len(chosen))
	for n := range chosen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mods = append(mods, chosen[n])
	}
	return mods, refused
}

func refusal(what, path string, err error) error {
	var e *trustdir.Error
	if errors.As(err, &e) {
		return &ModuleRefusedError{What: what, Path: path, Err: e}
	}
	return fmt.Errorf("%s %s not loaded: %w", what, trustdir.Shown(path), err)
}

// ModulesValue is the value of [ModulesEnv] for mods: a JSON array of
// [path, dev, ino, owner] (dev, ino and owner null where files have none),
// in load order.
func ModulesValue(mods []Module) string {
	rows := make([][4]any, len(mods))
	for i, m := range mods {
		rows[i] = [4]any{m.Path, nil, nil, nil}
		if m.HasID {
			rows[i][1], rows[i][2] = m.ID.Dev, m.ID.Ino
		}
		if m.HasID && m.Owner >= 0 {
			rows[i][3] = m.Owner
		}
	}
	b, _ := json.Marshal(rows)
	return string(b)
}

// Source reads the module from the file FindModules judged, as runner.py
// does before it runs one: Path is opened once (without blocking on a fifo
// put in its place), and a file that is not the one judged, or is no
// longer a regular file of the user's or root's that no one else may
// write, is refused with a [*ModuleRefusedError]. For backends that run
// the code elsewhere (a gateway kernel, perhaps on another machine).
func (m Module) Source() ([]byte, error) {
	f, err := openNoBlock(m.Path)
	if err != nil {
		return nil, fmt.Errorf("extension module %s was not loaded: %w", trustdir.Shown(m.Path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("extension module %s was not loaded: %w", trustdir.Shown(m.Path), err)
	}
	if err := trustdir.Opened(m.Path, fi, m.Mark); err != nil {
		return nil, refusal("extension module", m.Path, err)
	}
	src, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("extension module %s was not loaded: %w", trustdir.Shown(m.Path), err)
	}
	return src, nil
}
