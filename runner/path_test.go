package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestPath(t *testing.T) {
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
			if want := filepath.Join(cache, "runner-"+Hash()[:16], "runner.py"); p != want {
				t.Errorf("path %q, want %q", p, want)
			}
			checkCopy(t, filepath.Dir(p))
			entries, _ := os.ReadDir(cache)
			if len(entries) != 1 {
				t.Errorf("cache dir holds %d entries, want only the runner dir: %v", len(entries), entries)
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
	checkCopy(t, filepath.Join(cache, "runner-"+Hash()[:16]))
}

func TestPathRejectsEmptyDir(t *testing.T) {
	if _, err := Path(""); err == nil {
		t.Error("Path(\"\") succeeded")
	}
}

func TestHashCoversBothFiles(t *testing.T) {
	h := Hash()
	if len(h) != 64 {
		t.Fatalf("hash %q", h)
	}
	saved := prelude
	defer func() { prelude = saved }()
	prelude = append(bytes.Clone(saved), '#')
	if Hash() == h {
		t.Error("hash does not change with prelude.py")
	}
}

func mustPath(t *testing.T, cache string) string {
	t.Helper()
	p, err := Path(cache)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func checkCopy(t *testing.T, dir string) {
	t.Helper()
	for name, want := range map[string][]byte{"runner.py": Source(), "core.py": core, "prelude.py": []byte(Prelude())} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in %s differs from the embedded copy (%v)", name, dir, err)
		}
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
