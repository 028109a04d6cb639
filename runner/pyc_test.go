package runner

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tamperProbe rewrites the core.py bytecode cache named by argv[1] so that
// loading it creates the file argv[2]. argv[3] says how much of the header
// it keeps valid: "magic" (only the magic number, all the old cache checked),
// "header" (the real header over a swapped payload) or "whole" (a fully
// consistent file, for the owner and mode checks).
const tamperProbe = `import _imp, marshal, sys
from _frozen_importlib_external import MAGIC_NUMBER
cache, marker, keep = sys.argv[1:]
data = open(cache, "rb").read()
payload = marshal.dumps(compile("open(%r, 'w').close()" % marker, "evil", "exec"))
raw = int.from_bytes(MAGIC_NUMBER, "little")
if keep == "magic":
    data = MAGIC_NUMBER + payload
elif keep == "header":
    data = data[:20] + payload
else:
    data = data[:12] + _imp.source_hash(raw, payload) + payload
open(cache, "wb").write(data)
`

func TestTamperedBytecodeIsNotRun(t *testing.T) {
	exe := python(t)
	for _, tc := range []struct {
		name    string
		keep    string
		prepare func(t *testing.T, cache string)
	}{
		{name: "payload swapped, only the magic valid", keep: "magic"},
		{name: "payload swapped under the real header", keep: "header"},
		{name: "consistent file owned by another user", keep: "whole",
			prepare: func(t *testing.T, cache string) { chown(t, cache, nobody) }},
		{name: "consistent file others may write", keep: "whole",
			prepare: func(t *testing.T, cache string) {
				if err := os.Chmod(cache, 0o666); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := Path(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			p := start(t, startOpts{runner: path})
			p.req.Close()
			p.wait()
			caches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "__pycache__", "core.*.evh"))
			if len(caches) != 1 {
				t.Fatalf("bytecode caches %v, want one", caches)
			}
			marker := filepath.Join(t.TempDir(), "ran")
			if out, err := exec.Command(exe, "-c", tamperProbe, caches[0], marker, tc.keep).CombinedOutput(); err != nil {
				t.Fatalf("tamper: %v\n%s", err, out)
			}
			if tc.prepare != nil {
				tc.prepare(t, caches[0])
			}
			tampered, _ := os.ReadFile(caches[0])
			wantResult("2")(t, start(t, startOpts{runner: path}).run("1 + 1"))
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the tampered bytecode ran")
			}
			if b, err := os.ReadFile(caches[0]); err != nil || bytes.Equal(b, tampered) {
				t.Errorf("tampered cache not rewritten (%v)", err)
			}
		})
	}
}
