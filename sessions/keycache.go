package sessions

import (
	"os"
	"path/filepath"
	"sync"
)

// keyCache remembers what a request's cwd resolved to, its absolute path and
// its interpreter, so a warm request pays a stat or two instead of Getwd's,
// checkCwd's and interpreter resolution's six. An entry holds while the
// process's working directory (for a relative cwd) and the cwd are the same
// directories, the cwd is unmodified (creating a .venv in it changes its
// mtime) and so is the home (the managed venv). The interpreter itself is
// not checked: a session's start reports one that is gone.
type keyCache struct {
	mu sync.Mutex
	m  map[keyIn]keyOut
}

// keyIn is what resolution reads besides the disk.
type keyIn struct {
	cwd, explicit, virtualEnv, condaPrefix, path string
}

type keyOut struct {
	abs      string
	py       Interpreter
	wd, dir  os.FileInfo // wd: the process's working directory, for a relative cwd
	home     os.FileInfo // nil without a home
	resolved bool        // py is set (a request of sh cells alone may resolve none)
}

// maxKeyCache bounds the entries; past it the cache starts over.
const maxKeyCache = 256

// keyInput is the cache key of a request's cwd and explicit interpreter.
func (r *Registry) keyInput(cwd, explicit string) keyIn {
	get := r.cfg.Getenv
	return keyIn{cwd: cwd, explicit: explicit, virtualEnv: get("VIRTUAL_ENV"), condaPrefix: get("CONDA_PREFIX"), path: os.Getenv("PATH")}
}

// get returns the entry for in if it still holds.
func (c *keyCache) get(in keyIn, home string) (keyOut, bool) {
	c.mu.Lock()
	e, ok := c.m[in]
	c.mu.Unlock()
	if !ok {
		return keyOut{}, false
	}
	var dir os.FileInfo
	if !filepath.IsAbs(in.cwd) {
		wd, err := os.Stat(".")
		if err != nil || !os.SameFile(wd, e.wd) {
			return keyOut{}, false
		}
		if filepath.Clean(in.cwd) == "." {
			dir = wd
		}
	}
	if dir == nil {
		var err error
		if dir, err = os.Stat(e.abs); err != nil {
			return keyOut{}, false
		}
	}
	if !sameState(dir, e.dir) {
		return keyOut{}, false
	}
	if home != "" {
		h, err := os.Stat(home)
		if err != nil || !sameState(h, e.home) {
			return keyOut{}, false
		}
	}
	return e, true
}

// put stores what in resolved to, with the state it was resolved in.
func (c *keyCache) put(in keyIn, home string, out keyOut) {
	var err error
	if out.dir, err = os.Stat(out.abs); err != nil {
		return
	}
	if !filepath.IsAbs(in.cwd) {
		if out.wd, err = os.Stat("."); err != nil {
			return
		}
	}
	if home != "" {
		if out.home, err = os.Stat(home); err != nil {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxKeyCache {
		c.m = map[keyIn]keyOut{}
	}
	c.m[in] = out
}

func sameState(a, b os.FileInfo) bool {
	return b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.IsDir() == b.IsDir()
}
