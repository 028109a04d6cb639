package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evalhost/evalhost/internal/timeline"
)

// Resolving a candidate costs nothing for a binary: it is started directly,
// and the runner's ready frame reports its executable and version. Only a
// script (a version manager's shim: pyenv, asdf) is probed, because exec'ing
// the shim on every start costs tens of milliseconds; its answer is kept on
// disk under a key made of everything the shim reads to choose a version,
// so a change it would see misses the cache. A start that fails or reports
// another executable than the cached one drops the entry (forgetResolution).

// shimEnv are the variables version managers read to choose a Python.
var shimEnv = []string{"PATH", "PYENV_VERSION", "PYENV_ROOT", "PYENV_DIR", "ASDF_PYTHON_VERSION", "ASDF_DATA_DIR", "ASDF_DIR"}

// versionFiles are the per-directory version files, looked up from the cwd.
var versionFiles = []string{".python-version", ".tool-versions"}

// resolutionCacheVersion is part of every key: a change of the entry's
// format, or of what a key covers, misses every older entry.
const resolutionCacheVersion = "1"

// cachedResolution is one entry of the resolution cache.
type cachedResolution struct {
	Shim    string   `json:"shim"`
	Exe     string   `json:"exe"`
	Version string   `json:"version"`
	Key     []string `json:"key"` // what the key covers, for doctor
}

// resolveCandidate turns a candidate into what to exec.
func resolveCandidate(c candidate, cwd, home string, getenv func(string) string, timeout time.Duration) probeResult {
	f, err := os.Open(c.path)
	if err != nil {
		return probeResult{err: openError(err)}
	}
	// A binary is not probed, so what a probe would have refused is
	// refused here: only a regular, executable file can be an interpreter.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		f.Close()
		what := errNotExecutable
		if err == nil && fi.IsDir() {
			what = errIsDir
		}
		return probeResult{err: what}
	}
	head := make([]byte, 2)
	_, rerr := io.ReadFull(f, head)
	f.Close()
	if rerr != nil || string(head) != "#!" {
		// A binary (or something too short to be a script, which its
		// start will report). Starting it is its probe.
		return probeResult{exe: c.path, how: "a binary: started directly, no probe (its ready frame reports the version)"}
	}
	key, parts := shimKey(c.path, cwd, getenv)
	entry := filepath.Join(resolutionDir(home), key+".json")
	if home != "" {
		if res, ok := readResolution(entry, c.path); ok {
			res.how = "a script (version-manager shim): resolved by an earlier probe, cached in " + entry
			res.key, res.cacheFile = parts, entry
			return res
		}
	}
	res := probe(c.path, key, cwd, timeout)
	if res.err == nil && home != "" {
		if err := writeResolution(entry, cachedResolution{Shim: c.path, Exe: res.exe, Version: res.version, Key: parts}); err != nil {
			timeline.Mark("resolve-cache-write-failed", "err", err)
		}
		res.cacheFile = entry
	}
	res.how = "a script (version-manager shim): probed once in the session's cwd; later starts exec the answer"
	res.key = parts
	return res
}

// resolutionDir holds the resolution cache.
func resolutionDir(home string) string { return filepath.Join(home, "cache", "interpreters") }

// shimKey hashes what a shim reads to choose a version: the shim file
// itself, the variables in shimEnv, the version files from cwd up to the
// root (and from PYENV_DIR), and the global version file. parts says what
// was covered, in words, for doctor.
func shimKey(shim, cwd string, getenv func(string) string) (key string, parts []string) {
	parts = append(parts, "cache format "+resolutionCacheVersion)
	if fi, err := os.Stat(shim); err == nil {
		parts = append(parts, fmt.Sprintf("shim %s (%d bytes, modified %s)", shim, fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano)))
	}
	for _, name := range shimEnv {
		if v, ok := lookupEnv(getenv, name); ok {
			parts = append(parts, name+"="+v)
		} else {
			parts = append(parts, name+" unset")
		}
	}
	dirs := []string{cwd}
	if d := getenv("PYENV_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, start := range dirs {
		for dir := start; ; dir = filepath.Dir(dir) {
			for _, name := range versionFiles {
				parts = appendFile(parts, filepath.Join(dir, name))
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	root := getenv("PYENV_ROOT")
	if root == "" {
		// A pyenv shim lives in $PYENV_ROOT/shims.
		root = filepath.Dir(filepath.Dir(shim))
	}
	parts = appendFile(parts, filepath.Join(root, "version"))
	if h, err := os.UserHomeDir(); err == nil {
		parts = appendFile(parts, filepath.Join(h, ".tool-versions"))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16]), parts
}

// appendFile adds a version file's content (or its absence: creating one
// must miss the cache too).
func appendFile(parts []string, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return parts // absent: the other parts already differ once it exists
	}
	return append(parts, fmt.Sprintf("%s=%q", path, strings.TrimSpace(string(b))))
}

// lookupEnv tells an empty variable from an unset one where getenv can't.
func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

func readResolution(path, shim string) (probeResult, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return probeResult{}, false
	}
	var c cachedResolution
	if json.Unmarshal(b, &c) != nil || c.Shim != shim || c.Exe == "" {
		return probeResult{}, false
	}
	if _, err := os.Stat(c.Exe); err != nil {
		_ = os.Remove(path) // uninstalled since: probe again
		return probeResult{}, false
	}
	return probeResult{exe: c.Exe, version: c.Version}, true
}

// writeResolution writes an entry whole (a temporary file renamed into
// place), readable by its owner only.
func writeResolution(path string, c cachedResolution) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".resolution-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// VerifyStart checks an interpreter's start against its resolution: a
// cached shim resolution whose start failed, or whose ready frame names
// another executable, is dropped, so the next start probes the shim again.
// readyExe is the ready frame's executable ("" when the start failed).
func (py Interpreter) VerifyStart(readyExe string, startErr error) {
	if py.cacheFile == "" {
		return
	}
	if startErr == nil && (readyExe == "" || sameFile(readyExe, py.Path)) {
		return
	}
	_ = os.Remove(py.cacheFile)
	probeCache.Delete(py.probeKey)
	timeline.Mark("resolve-cache-dropped", "file", py.cacheFile, "ready", readyExe, "err", startErr)
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
