package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestPath runs each row twice: as a start within racyWindow of the copy's
// writing finds it (no stamp: the content is compared), and as a later one
// does (stamped: the stamp must not vouch for a file changed since).
func TestPath(t *testing.T) {
	for _, stamped := range []bool{false, true} {
		t.Run(map[bool]string{false: "racy", true: "stamped"}[stamped], func(t *testing.T) {
			stampInstalls = stamped
			t.Cleanup(func() { stampInstalls = false })
			testPath(t)
		})
	}
}

func testPath(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, cache string) // before the call under test
	}{
		{"fresh cache dir", func(t *testing.T, cache string) {}},
		{"cache dir does not exist yet", func(t *testing.T, cache string) { os.Remove(cache) }},
		{"reuses an intact copy", func(t *testing.T, cache string) { mustPath(t, cache) }},
		{"replaces a damaged copy", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			if err := os.WriteFile(p, []byte("damaged"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaces a file with other bytes of the same length", func(t *testing.T, cache string) {
			path := filepath.Join(filepath.Dir(mustPath(t, cache)), "core.py")
			b := []byte(embedded("core.py"))
			b[len(b)/2] ^= 1
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaces a file that grew", func(t *testing.T, cache string) {
			path := filepath.Join(filepath.Dir(mustPath(t, cache)), "core.py")
			if err := os.WriteFile(path, []byte(embedded("core.py")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaces a file that shrank", func(t *testing.T, cache string) {
			path := filepath.Join(filepath.Dir(mustPath(t, cache)), "wire.py")
			if err := os.WriteFile(path, []byte(embedded("wire.py")[:10]), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaces a file another user owns", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			chown(t, filepath.Join(filepath.Dir(p), "core.py"), nobody)
		}},
		{"replaces a file others may write", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			if err := os.Chmod(filepath.Join(filepath.Dir(p), "core.py"), 0o666); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaces a symlinked file", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			other := filepath.Join(t.TempDir(), "core.py")
			if err := os.WriteFile(other, []byte(embedded("core.py")), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(filepath.Dir(p), "core.py")
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaces a runner dir another user owns", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			chown(t, filepath.Dir(p), nobody)
		}},
		{"makes a loose runner dir private", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			if err := os.Chmod(filepath.Dir(p), 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"removes a __pycache__ others may write", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			pyc := filepath.Join(filepath.Dir(p), "__pycache__")
			if err := os.Mkdir(pyc, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(pyc, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"removes a __pycache__ another user owns", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			pyc := filepath.Join(filepath.Dir(p), "__pycache__")
			if err := os.Mkdir(pyc, 0o700); err != nil {
				t.Fatal(err)
			}
			chown(t, pyc, nobody)
		}},
		{"replaces a copy missing prelude.py", func(t *testing.T, cache string) {
			p := mustPath(t, cache)
			if err := os.Remove(filepath.Join(filepath.Dir(p), "prelude.py")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			if err := os.Mkdir(cache, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, cache)
			p := mustPath(t, cache)
			if want := filepath.Join(cache, "runner-"+Hash(), "runner.py"); p != want {
				t.Errorf("path %q, want %q", p, want)
			}
			checkCopy(t, filepath.Dir(p))
			checkPrivate(t, filepath.Dir(p))
			entries, _ := os.ReadDir(cache)
			entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return e.Name() == lockName })
			if len(entries) != 1 {
				t.Errorf("cache dir holds %d entries, want only the runner dir (and its lock): %v", len(entries), entries)
			}
		})
	}
}

func TestPathConcurrent(t *testing.T) {
	cache := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Path(cache)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Path: %v", err)
		}
	}
	checkCopy(t, filepath.Join(cache, "runner-"+Hash()))
}

// nobody is the uid the tests give files "another user" owns (tests run as
// root in CI; elsewhere the tests that need chown skip).
const nobody = 65534

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Skipf("chown %s to uid %d needs root: %v", path, uid, err)
	}
}

func TestPathRefusesAnotherUsersCacheDir(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	chown(t, cache, nobody)
	_, err := Path(cache)
	if !errors.Is(err, ErrUnsafeCache) || !strings.Contains(err.Error(), cache) || !strings.Contains(err.Error(), "EVALHOST_HOME") {
		t.Fatalf("Path on another user's dir: %v; want ErrUnsafeCache naming the dir and what to do", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("Path wrote into another user's dir: %v", entries)
	}
}

func TestPathMakesLooseCacheDirPrivate(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	mustPath(t, cache)
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("cache dir mode after Path: %v (%v), want no group/other write", fi.Mode(), err)
	}
}

func TestPathRejectsEmptyDir(t *testing.T) {
	if _, err := Path(""); err == nil {
		t.Error("Path(\"\") succeeded")
	}
}

// TestEmbeddedListsEveryFile holds embedded.go's list to the directory: a
// .py file added here and not listed there would be missing from every
// runner copy.
func TestEmbeddedListsEveryFile(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".py") {
			want = append(want, e.Name())
		}
	}
	var got []string
	for _, f := range embeddedFiles {
		got = append(got, f.name)
		b, err := os.ReadFile(f.name)
		if err != nil || string(b) != f.data {
			t.Errorf("embedded %s differs from the file here (%v)", f.name, err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("embedded.go lists %q; the directory has %q: add the missing //go:embed lines, in name order", got, want)
	}
}

// TestEmbeddedHash keeps embedded_hash.go the hash of the files embedded
// now: go test ./runner -update rewrites it after a change to them.
func TestEmbeddedHash(t *testing.T) {
	h := hashOf(embeddedFiles)
	if len(h) != 16 {
		t.Fatalf("hash %q", h)
	}
	src := fmt.Sprintf(embeddedHashSource, h)
	testkit.Golden(t, "embedded_hash.go", []byte(src))
	changed := slices.Clone(embeddedFiles)
	for i, f := range changed {
		if f.name == "prelude.py" {
			changed[i].data = f.data + "#"
		}
	}
	if hashOf(changed) == h {
		t.Error("hash does not change with prelude.py")
	}
}

const embeddedHashSource = `// Code generated by TestEmbeddedHash (go test ./runner -update); DO NOT EDIT.

package runner

// embeddedHash is hashOf(embeddedFiles): see Hash.
const embeddedHash = %q
`

// stampInstalls makes mustPath stamp the copy as a start past racyWindow
// would.
var stampInstalls bool

func mustPath(t *testing.T, cache string) string {
	t.Helper()
	p, err := Path(cache)
	if err != nil {
		t.Fatal(err)
	}
	if stampInstalls {
		stampSettled(t, filepath.Dir(p))
	}
	return p
}

// stampSettled writes dir's stamp as Path does once its files are older
// than racyWindow: it waits (for an event, not a time) until the file
// clock has ticked past their change times, so a write made after it
// gets a later one, as a write racyWindow later would.
func stampSettled(t testing.TB, dir string) {
	t.Helper()
	var newest time.Time
	for _, f := range embeddedFiles {
		if c := changeTime(t, filepath.Join(dir, f.name)); c.After(newest) {
			newest = c
		}
	}
	probe := filepath.Join(t.TempDir(), "tick")
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if now := changeTime(t, probe); now.After(newest) {
			writeStamp(dir, now)
			break
		}
		runtime.Gosched()
	}
	if !stampHolds(dir) {
		t.Fatalf("no stamp holds for %s after writeStamp", dir)
	}
}

func checkCopy(t *testing.T, dir string) {
	t.Helper()
	for name, want := range map[string][]byte{"runner.py": Source(), "core.py": []byte(embedded("core.py")), "prelude.py": []byte(Prelude())} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in %s differs from the embedded copy (%v)", name, dir, err)
		}
	}
}

// checkPrivate fails unless dir and every file in it are this user's alone.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("runner dir %s: %v (%v), want a 0700 directory", dir, fi.Mode(), err)
	}
	for _, f := range embeddedFiles {
		fi, err := os.Lstat(filepath.Join(dir, f.name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s: %v (%v), want a regular file no one else may write", f.name, fi.Mode(), err)
			continue
		}
		if uid, me, ok := owner(fi); ok && uid != me {
			t.Errorf("%s owned by uid %d, want %d", f.name, uid, me)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "__pycache__")); err == nil && !private(fi) {
		t.Errorf("__pycache__ %v, want a 0700 directory of this user's, or none", fi.Mode())
	}
}

func TestBytecodeCache(t *testing.T) {
	p := start(t, startOpts{})
	p.req.Close()
	p.wait()
	caches, _ := filepath.Glob(filepath.Join(filepath.Dir(runnerPath), "__pycache__", "core.*.evh"))
	if len(caches) != 1 {
		t.Fatalf("bytecode caches %v, want one", caches)
	}
	if err := os.WriteFile(caches[0], []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantResult("2")(t, start(t, startOpts{}).run("1 + 1"))
	if b, err := os.ReadFile(caches[0]); err != nil || string(b) == "garbage" {
		t.Errorf("damaged cache not rewritten (%v)", err)
	}
}
