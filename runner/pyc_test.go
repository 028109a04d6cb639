package runner

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// tamperProbe rewrites the core.py bytecode cache named by argv[1] so that
// loading it creates the file argv[2]. argv[3] says how much of it stays
// valid: "magic" (only the magic number), "header" (the real header, the
// .py's key and the real payload's length, over another payload) or "whole"
// (a consistent file: the real key, then the other payload and its length;
// for the rows on owner, mode, kind and provenance).
const tamperProbe = `import marshal, sys
from _frozen_importlib_external import MAGIC_NUMBER
cache, marker, keep = sys.argv[1:]
data = open(cache, "rb").read()
key = data[: data.index(b"\n", len(MAGIC_NUMBER)) + 1]
payload = marshal.dumps(compile("open(%r, 'w').close()" % marker, "evil", "exec"))
if keep == "magic":
    data = MAGIC_NUMBER + payload
elif keep == "header":
    data = data[: len(key) + 8] + payload
else:
    data = key + len(payload).to_bytes(8, "little") + payload
open(cache, "wb").write(data)
`

// coreCache starts the runner at path once, so that it writes its
// bytecode caches, and returns core's.
func coreCache(t *testing.T, path string) string {
	t.Helper()
	p := start(t, startOpts{runner: path})
	p.req.Close()
	p.wait()
	caches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "__pycache__", "core.*.evh"))
	if len(caches) != 1 {
		t.Fatalf("bytecode caches %v, want one", caches)
	}
	return caches[0]
}

// tamper runs tamperProbe over cache.
func tamper(t *testing.T, cache, marker, keep string) {
	t.Helper()
	if out, err := exec.Command(python(t), "-c", tamperProbe, cache, marker, keep).CombinedOutput(); err != nil {
		t.Fatalf("tamper: %v\n%s", err, out)
	}
}

func TestTamperedBytecodeIsNotRun(t *testing.T) {
	chmod := func(mode os.FileMode) func(t *testing.T, cache, marker string) {
		return func(t *testing.T, cache, marker string) {
			tamper(t, cache, marker, "whole")
			if err := os.Chmod(cache, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, cache, marker string)
	}{
		{"payload swapped, only the magic valid", func(t *testing.T, cache, marker string) {
			tamper(t, cache, marker, "magic")
		}},
		// Refused by the length alone: the key names the .py, not the payload.
		{"payload swapped under the real header", func(t *testing.T, cache, marker string) {
			tamper(t, cache, marker, "header")
		}},
		{"bytes appended", func(t *testing.T, cache, marker string) {
			appendTo(t, cache, []byte{0})
		}},
		{"truncated", func(t *testing.T, cache, marker string) {
			fi, err := os.Stat(cache)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(cache, fi.Size()-100); err != nil {
				t.Fatal(err)
			}
		}},
		{"consistent file owned by another user", func(t *testing.T, cache, marker string) {
			tamper(t, cache, marker, "whole")
			chown(t, cache, nobody)
		}},
		{"consistent file others may write", chmod(0o666)},
		{"consistent file its group may write", chmod(0o620)},
		// The runner dir is this user's alone (Path): only this user can
		// put a link there, but its target may be anywhere.
		{"consistent file behind a symlink", func(t *testing.T, cache, marker string) {
			tamper(t, cache, marker, "whole")
			target := filepath.Join(t.TempDir(), "core.evh")
			if err := os.Rename(cache, target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, cache); err != nil {
				t.Fatal(err)
			}
		}},
		// Another runner dir's core.py has the same content, not the same
		// inode: what is consistent there (another user's home, a backup)
		// is not here.
		{"consistent file of another runner dir, copied in", func(t *testing.T, cache, marker string) {
			other, err := Path(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			theirs := coreCache(t, other)
			tamper(t, theirs, marker, "whole")
			b, err := os.ReadFile(theirs)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(cache); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cache, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		// Its open must not wait for a writer.
		{"a fifo", func(t *testing.T, cache, marker string) {
			if err := os.Remove(cache); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(cache, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := Path(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cache := coreCache(t, path)
			marker := filepath.Join(t.TempDir(), "ran")
			tc.tamper(t, cache, marker)
			tampered := regular(t, cache)
			wantResult("2")(t, start(t, startOpts{runner: path}).run("1 + 1"))
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the tampered bytecode ran")
			}
			if b := regular(t, cache); b == nil || bytes.Equal(b, tampered) {
				t.Errorf("tampered cache not rewritten")
			}
		})
	}
}

// regular is path's content when it is a regular file (not followed), else nil.
func regular(t *testing.T, path string) []byte {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// takenTmpProbe loads core through runner.py's _load (argv[1]) while its
// temporary file <cache>.<pid>.tmp holds b"theirs", as when a runner with
// this pid in another pid namespace is writing the same cache, and prints
// what that file holds after, and whether the cache was written.
const takenTmpProbe = `import os, sys
runner = sys.argv[1]
ns = {"__name__": "probe"}
exec(compile(open(runner).read(), runner, "exec"), ns)
here = os.path.dirname(runner)
cache = os.path.join(here, "__pycache__", "core.%s.evh" % sys.implementation.cache_tag)
os.makedirs(os.path.dirname(cache), 0o700, exist_ok=True)
tmp = "%s.%d.tmp" % (cache, os.getpid())
with open(tmp, "wb") as f:
    f.write(b"theirs")
ns["_load"](here, "core")
print(open(tmp, "rb").read().decode() if os.path.exists(tmp) else "(gone)", os.path.exists(cache))
`

// TestCacheWriteLeavesATakenName: a runner whose temporary name is taken
// compiles and goes on, and leaves that file to its writer. The temporary
// file is created exclusively because a pid names no one writer across pid
// namespaces: two writers of one name would make a mix no hash refuses.
func TestCacheWriteLeavesATakenName(t *testing.T) {
	path, err := Path(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python(t), "-c", takenTmpProbe, path).CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if got := string(out); got != "theirs False\n" {
		t.Errorf("taken temporary file and cache written: %q, want %q", got, "theirs False\n")
	}
}
