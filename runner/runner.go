package runner

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Version is the runner version runner.py reports in its ready frame.
const Version = "1.1"

// file is one embedded Python file.
type file struct {
	name string
	data string
}

// embedded returns the named file's content; it must exist.
func embedded(name string) string {
	for _, f := range embeddedFiles {
		if f.name == name {
			return f.data
		}
	}
	panic("runner: no embedded " + name)
}

// Source returns runner.py, the bootstrap the host starts; it loads core.py
// (the runner proper, which loads the ipy_*.py modules on first use) from its
// directory through a bytecode cache.
func Source() []byte { return []byte(embedded("runner.py")) }

// Prelude returns prelude.py, the helpers every Python session starts with.
func Prelude() string { return embedded("prelude.py") }

// Hash returns 16 hex digits naming this set of embedded .py files: the
// cache directory is runner-<Hash>, so a changed runner never reuses an old
// copy. Two CRC-32s (IEEE and Castagnoli) over each file's name, length and
// content, not a cryptographic hash: the name only keeps versions apart, and
// Path checks the files themselves whatever the name. It is computed when
// the files change (TestEmbeddedHash; go test ./runner -update rewrites
// embedded_hash.go), not at run time: hashing 300 KB of embedded source
// faulted it into a fresh process, ~0.4 ms of every start (issue 16).
func Hash() string { return embeddedHash }

func hashOf(files []file) string {
	castagnoli := crc32.MakeTable(crc32.Castagnoli) // not at init: ~0.3 ms that every evalhost command paid
	var ieee, cast uint32
	sum := func(b []byte) {
		ieee = crc32.Update(ieee, crc32.IEEETable, b)
		cast = crc32.Update(cast, castagnoli, b)
	}
	// The files' bytes go through a buffer on the stack: a []byte(string)
	// of each would copy all of them onto the heap again.
	var buf [4096]byte
	var head [8]byte
	for _, f := range files {
		binary.LittleEndian.PutUint64(head[:], uint64(len(f.data)))
		sum(append(append(buf[:0], f.name...), 0))
		sum(head[:])
		for rest := f.data; rest != ""; {
			n := copy(buf[:], rest)
			sum(buf[:n])
			rest = rest[n:]
		}
	}
	var out [8]byte
	binary.BigEndian.PutUint32(out[:4], ieee)
	binary.BigEndian.PutUint32(out[4:], cast)
	return hex.EncodeToString(out[:])
}

// Path makes sure <cacheDir>/runner-<16 hex of Hash>/ holds the embedded
// files and returns the path of runner.py. Nothing on disk is trusted by its
// name: on every call cacheDir must be a directory this user owns (it is made
// 0700 if it is looser), the runner directory must be a real directory owned
// by this user (mode 0700), and each file must be a regular file owned by this
// user, writable by no one else, with exactly the embedded content; a file
// that is not is rewritten atomically (written beside it, renamed over it),
// and a __pycache__ that is not this user's alone is removed (runner.py
// rebuilds it). runner.py keys the bytecode in it to each source's inode,
// size and times, trusting the content to this check, and to a file being
// replaced only by a rename. A first copy is written as a temporary directory renamed
// into place, so concurrent callers never see half a copy.
//
// A start that finds the copy whole takes no lock and reads no directory.
// It knows the copy whole from the dir's stamp when every file is still the
// one the stamp records (stamp_unix.go: one lstat per file, where comparing
// the content faulted 300 KB into every fresh process), by comparing the
// content when not, and then writes the stamp.
// One that must write takes the cache's lock (another start's write, here,
// in another pid namespace or on another host, is waited for), checks
// again, writes, and removes what starts killed mid-write left: their
// temporary files and copies.
//
// It is an error ([ErrUnsafeCache]) when cacheDir belongs to another user:
// that user could swap the runner for code that runs as you.
func Path(cacheDir string) (string, error) {
	if cacheDir == "" {
		return "", errors.New("runner: empty cache dir: pass a directory such as ~/.evalhost/cache")
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", fmt.Errorf("runner: create cache dir: %w", err)
	}
	if err := ownDir(cacheDir, false); err != nil {
		return "", err
	}
	dir := filepath.Join(cacheDir, "runner-"+Hash())
	main := filepath.Join(dir, "runner.py")
	if ownDir(dir, true) == nil {
		if stampHolds(dir) {
			return main, tidyPycache(dir)
		}
		if whole(dir) {
			writeStamp(dir, time.Now().Add(-racyWindow))
			return main, tidyPycache(dir)
		}
	}
	unlock, locked, err := lockCache(cacheDir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := install(cacheDir, dir); err != nil {
		return "", err
	}
	if err := repair(dir); err != nil {
		return "", err
	}
	writeStamp(dir, time.Now().Add(-racyWindow))
	if locked {
		sweepCopies(cacheDir)
		sweepTemps(dir)
	}
	return main, tidyPycache(dir)
}

// install makes dir a trusted runner dir, unless it is one: an untrusted
// one is moved aside, and a copy is written and renamed into place.
func install(cacheDir, dir string) error {
	err := ownDir(dir, true)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		if err := moveAside(dir); err != nil {
			return err
		}
	}
	tmp, err := writeCopy(cacheDir)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// An older evalhost, which takes no lock, may have put its copy there.
	if err := os.Rename(tmp, dir); err != nil && ownDir(dir, true) != nil {
		return fmt.Errorf("runner: install %s: %w", dir, err)
	}
	return nil
}

// ErrUnsafeCache is wrapped by Path's error when a directory it would run
// code from belongs to another user or cannot be made private.
var ErrUnsafeCache = errors.New("runner cache is not private")

// ownDir checks that dir is a directory owned by this user and, unless it is
// another user's, makes it 0700 when group or others may write it (or, with
// exact, have any access). With exact a symlink is refused too.
func ownDir(dir string, exact bool) error {
	stat := os.Stat
	if exact {
		stat = os.Lstat
	}
	fi, err := stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("runner: %s is not a directory: %w", dir, ErrUnsafeCache)
	}
	if uid, me, ok := owner(fi); ok && uid != me {
		return fmt.Errorf("runner: cache dir %s is owned by uid %d, not you (uid %d), so its owner could run code as you; "+
			"remove it, or set EVALHOST_HOME to a directory of your own: %w", dir, uid, me, ErrUnsafeCache)
	}
	loose := fi.Mode().Perm()&0o022 != 0
	if exact {
		loose = fi.Mode().Perm() != 0o700
	}
	if loose {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("runner: make cache dir %s private: %v: %w", dir, err, ErrUnsafeCache)
		}
	}
	return nil
}

// writeCopy writes every embedded file into a new 0700 temporary directory
// under cacheDir and returns its path.
func writeCopy(cacheDir string) (string, error) {
	tmp, err := os.MkdirTemp(cacheDir, copyPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("runner: create temp dir: %w", err)
	}
	for _, f := range embeddedFiles {
		if err := os.WriteFile(filepath.Join(tmp, f.name), []byte(f.data), 0o600); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("runner: write %s: %w", f.name, err)
		}
	}
	return tmp, nil
}

// moveAside renames a runner dir that cannot be trusted out of the way and
// removes it.
func moveAside(dir string) error {
	trash, err := os.MkdirTemp(filepath.Dir(dir), oldPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return fmt.Errorf("runner: replace %s: %w", dir, err)
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(dir, filepath.Join(trash, "old")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("runner: move %s aside: %w", dir, err)
	}
	return nil
}

// whole reports whether every file of dir is exactly the embedded one and
// this user's alone.
func whole(dir string) bool {
	buf := readBuf()
	for _, f := range embeddedFiles {
		if !intactFile(filepath.Join(dir, f.name), f.data, buf) {
			return false
		}
	}
	return true
}

// repair rewrites each file of dir that is not exactly the embedded one, or
// not this user's alone.
func repair(dir string) error {
	buf := readBuf()
	for _, f := range embeddedFiles {
		path := filepath.Join(dir, f.name)
		if intactFile(path, f.data, buf) {
			continue
		}
		if err := replaceFile(path, f.data); err != nil {
			return err
		}
	}
	return nil
}

// readBuf is one buffer for every file's read: the largest file and a
// byte more.
func readBuf() []byte {
	size := 0
	for _, f := range embeddedFiles {
		size = max(size, len(f.data)+1)
	}
	return make([]byte, size)
}

// tidyPycache removes dir's __pycache__ unless it is this user's alone.
func tidyPycache(dir string) error {
	// Not chmod: while it was loose, anyone could have put files in it.
	pyc := filepath.Join(dir, "__pycache__")
	if fi, err := os.Lstat(pyc); err == nil && !private(fi) {
		if err := os.RemoveAll(pyc); err != nil {
			return fmt.Errorf("runner: remove untrusted %s: %w", pyc, err)
		}
	}
	return nil
}

// private reports whether fi is a directory of this user's that only this
// user may use.
func private(fi os.FileInfo) bool {
	uid, me, ok := owner(fi)
	return fi.IsDir() && fi.Mode().Perm() == 0o700 && (!ok || uid == me)
}

// replaceFile writes data beside path and renames it over path, so a reader
// sees the old file or the new one, never a mix.
func replaceFile(path string, data string) error {
	f, err := newTemp(path)
	if err != nil {
		return fmt.Errorf("runner: rewrite %s: %w", path, err)
	}
	_, werr := f.WriteString(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("runner: rewrite %s: %w", path, werr)
	}
	return nil
}
