package sessions

import (
	"os"
	"path/filepath"
	"sync"
)

// keyCache remembers what a request's cwd resolved to, its absolute path and
// its interpreter, so a warm request does not pay Getwd's, checkCwd's and
// interpreter resolution's six stats. An entry holds while the process's
// working directory (for a relative cwd) and the cwd are the same
// directories, the names resolution looks up in the cwd are unchanged
// (creating a .venv in it: cwdEntries; other files made there, an agent's
// edits between cells, are not a change) and so is the home's managed venv. The interpreter itself is not checked: a
// session's start reports one that is gone.
//
// On Linux this is watched (keywatch_linux.go): inotify on each directory
// the cwd's and the home's paths go through, for the name looked up there,
// on the cwd for the entries resolution looks up (cwdEntries: other files
// made there, an agent's edits, leave the entry) and on the home for its
// managed venv (the only entry of the home resolution reads); the mount
// table's poll event;
// getcwd(2) for a relative cwd. A warm request then checks with one ppoll
// (and a getcwd), raw system calls that ask no file system anything and so
// cannot block, and do not wake the runtime's monitor thread as the two
// stats did (with them ~15% of serve's CPU per warm cell). Any change that
// concerns a cached path drops every entry and its watches (inotify_rm_watch;
// the instance stays: closing one that had watches waits for an RCU grace
// period, 8-22 ms here, which a request must not pay). Watching starts at
// the first key used a second time: a registry that resolves once (a
// one-shot run, nb run) never makes an inotify instance, whose setup cost
// ~1 ms and whose close at exit ~10 ms of such a run; after a change, at the
// next key used again unchanged, so cells that write into their cwd do not
// set watches up for every request. Until then, elsewhere, or when watching
// cannot start, an entry is checked with stats: the working directory's and
// the cwd's identity, the cwd's and the home's mtime, and when one moved,
// the names resolution looks up there (statHolds); an entry so checked
// that holds is watched from then on, its watches set before a second look.
type keyCache struct {
	mu   sync.Mutex
	m    map[keyIn]keyOut
	w    keyWatch
	want bool // a key was used twice: watch from now on
}

// keyIn is what resolution reads besides the disk.
type keyIn struct {
	cwd, explicit, virtualEnv, condaPrefix, path string
}

type keyOut struct {
	abs      string
	id       cwdID // which directory abs was (cwdid.go)
	py       Interpreter
	resolved bool        // py is set (a request of sh cells alone may resolve none)
	keyToken             // watched: the state it holds under
	wd, dir  os.FileInfo // not watched: wd is the process's working directory, for a relative cwd
	home     os.FileInfo // nil without a home
	// Not watched: the states of cwdEntries in the cwd and homeEntries in
	// the home, which a cwd or home whose mtime moved is checked by.
	entries, homeEntries []os.FileInfo
}

// keyToken is what a resolution is watched under: taken before the cwd is
// resolved, so that what changes during resolution is seen.
type keyToken struct {
	watched bool
	gen     uint64 // the watches' generation
	procWd  string // getcwd's answer, for a relative cwd
}

// maxKeyCache bounds the entries; past it the cache, and its watches,
// start over.
const maxKeyCache = 256

// keyInput is the cache key of a request's cwd and explicit interpreter.
func (r *Registry) keyInput(cwd, explicit string) keyIn {
	get := r.cfg.Getenv
	return keyIn{cwd: cwd, explicit: explicit, virtualEnv: get("VIRTUAL_ENV"), condaPrefix: get("CONDA_PREFIX"), path: os.Getenv("PATH")}
}

// get returns the entry for in if it still holds. A stat-checked entry
// that holds is watched from then on (see keyCache).
func (c *keyCache) get(in keyIn, home string) (keyOut, bool) {
	c.mu.Lock()
	e, ok := c.m[in]
	if ok && e.watched {
		ok = c.holdsLocked(in, e)
	}
	c.mu.Unlock()
	if !ok {
		return keyOut{}, false
	}
	if e.watched {
		return e, true
	}
	if !statHolds(in, &e, home) {
		return keyOut{}, false
	}
	// Used again, unchanged: watched from now on, its watches set before a
	// second look, so that a change between the two is not missed.
	c.mu.Lock()
	c.want = true
	if _, ok := c.m[in]; ok {
		c.m[in] = e // the states statHolds took on
	}
	c.mu.Unlock()
	t := c.begin(in)
	c.watch(&t, e.abs, home)
	if t.watched {
		if !statHolds(in, &e, home) {
			return keyOut{}, false
		}
		c.put(in, home, e, t)
	}
	return e, true
}

// statHolds checks an entry made without watches by stats. A cwd or home
// whose mtime moved (files made there: an agent's edits) still holds when
// the names resolution looks up there are as they were, and e then takes
// its new state, so the next check is one stat again.
func statHolds(in keyIn, e *keyOut, home string) bool {
	var dir os.FileInfo
	if !filepath.IsAbs(in.cwd) {
		wd, err := os.Stat(".")
		if err != nil || !os.SameFile(wd, e.wd) {
			return false
		}
		if filepath.Clean(in.cwd) == "." {
			dir = wd
		}
	}
	if dir == nil {
		var err error
		if dir, err = os.Stat(e.abs); err != nil {
			return false
		}
	}
	if !dirStillHolds(dir, &e.dir, e.abs, cwdEntries, e.entries) {
		return false
	}
	if home != "" {
		h, err := os.Stat(home)
		if err != nil || !dirStillHolds(h, &e.home, home, homeEntries, e.homeEntries) {
			return false
		}
	}
	return true
}

// dirStillHolds says whether directory now is still the one then was, as far as
// resolution reads it: unchanged, or changed with its entries names as
// they were (was); then *then takes now's state.
func dirStillHolds(now os.FileInfo, then *os.FileInfo, path string, names []string, was []os.FileInfo) bool {
	if sameState(now, *then) {
		return true
	}
	if *then == nil || !os.SameFile(now, *then) || !now.IsDir() || !sameEntries(entryStates(path, names), was) {
		return false
	}
	*then = now
	return true
}

// entryStates are the states of the entries names of dir, as resolution
// finds them (links followed); nil for one that is not there.
func entryStates(dir string, names []string) []os.FileInfo {
	out := make([]os.FileInfo, len(names))
	for i, name := range names {
		out[i], _ = os.Stat(filepath.Join(dir, name))
	}
	return out
}

func sameEntries(a, b []os.FileInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || a[i] != nil && !sameState(a[i], b[i]) {
			return false
		}
	}
	return true
}

// holdsLocked checks a watched entry: no change reported since it was
// made, and the same working directory for a relative cwd.
func (c *keyCache) holdsLocked(in keyIn, e keyOut) bool {
	if e.gen != c.w.gen {
		return false
	}
	if c.w.changed() {
		// Watched again only once a key is used unchanged: a session whose
		// cells write into its cwd would otherwise set its watches up anew
		// for every request, dearer than the stats (1 file per cell: p50
		// 1.42 ms before the watch, 1.69 ms re-watching each time).
		c.w.reset()
		c.want = false
		return false
	}
	if filepath.IsAbs(in.cwd) {
		return true
	}
	wd := c.w.getwd()
	return wd != nil && string(wd) == e.procWd
}

// begin starts a resolution of in: the working directory it is made in,
// under the watches as they are now.
func (c *keyCache) begin(in keyIn) keyToken {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.want || !c.w.open() {
		return keyToken{}
	}
	t := keyToken{watched: true, gen: c.w.gen}
	if !filepath.IsAbs(in.cwd) {
		wd := c.w.getwd()
		if wd == nil {
			return keyToken{}
		}
		t.procWd = string(wd)
	}
	return t
}

// watch watches what abs's and home's resolution reads, before the
// interpreter is resolved in abs; t no longer counts as watched when a
// watch could not be set or the watches were reset since begin.
func (c *keyCache) watch(t *keyToken, abs, home string) {
	if !t.watched {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.watched = c.w.gen == t.gen && c.w.open() && c.w.watchPath(abs, cwdEntries...) && (home == "" || c.w.watchPath(home, homeEntries...))
}

// cwdEntries are the names resolution looks up in the cwd (candidates'
// venvs, a shim's version files): an agent editing its project there
// between cells does not drop the entry, and so does not have every next
// request resolved again and its watches set up anew (~80 us each).
var cwdEntries = append([]string{".venv", "venv"}, versionFiles...)

// homeEntries are the names resolution looks up in the home.
var homeEntries = []string{managedVenv}

// close stops watching; entries are checked with stats after it.
func (c *keyCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.close()
	c.m = nil
}

// put stores what in resolved to, with the state it was resolved in: t
// when it is still watched, else the stats get compares.
func (c *keyCache) put(in keyIn, home string, out keyOut, t keyToken) {
	if t.watched {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.w.gen == t.gen {
			out.keyToken = t
			c.storeLocked(in, out)
		}
		return
	}
	var err error
	if out.dir, err = os.Stat(out.abs); err != nil {
		return
	}
	out.entries = entryStates(out.abs, cwdEntries)
	if !filepath.IsAbs(in.cwd) {
		if out.wd, err = os.Stat("."); err != nil {
			return
		}
	}
	if home != "" {
		if out.home, err = os.Stat(home); err != nil {
			return
		}
		out.homeEntries = entryStates(home, homeEntries)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storeLocked(in, out)
}

func (c *keyCache) storeLocked(in keyIn, out keyOut) {
	if len(c.m) >= maxKeyCache {
		// The watches start over too: they would otherwise grow with
		// every directory any cwd went through, out of the user's
		// inotify watches, while no event reset them. out was made under
		// the dropped ones.
		c.w.reset()
		c.m = nil
		if out.watched {
			return
		}
	}
	if c.m == nil {
		c.m = map[keyIn]keyOut{}
	}
	c.m[in] = out
}

func sameState(a, b os.FileInfo) bool {
	return b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.IsDir() == b.IsDir()
}
