package tests

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile and EVALHOST_CPUPROFILE make run and serve write a CPU
// profile (a gzipped pprof protobuf) when they end; a file that cannot be
// written is a usage error that names the flag.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	flagged := filepath.Join(dir, "run.prof")
	if out, err := command(t, "run", "--cpuprofile", flagged, "-c", "1+1").CombinedOutput(); err != nil {
		t.Fatalf("run --cpuprofile: %v\n%s", err, out)
	}
	envd := filepath.Join(dir, "serve.prof")
	serve := command(t, "serve")
	serve.Env = append(serve.Env, "EVALHOST_CPUPROFILE="+envd)
	serve.Stdin = strings.NewReader(`{"op":"eval","id":"r1","cells":[{"code":"1+1"}]}` + "\n")
	if out, err := serve.CombinedOutput(); err != nil || !strings.Contains(string(out), `"type":"end"`) {
		t.Fatalf("serve with EVALHOST_CPUPROFILE: %v\n%s", err, out)
	}
	for _, path := range []string{flagged, envd} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s is not a pprof profile: %v", path, err)
		}
		if n, err := io.Copy(io.Discard, zr); err != nil || n == 0 {
			t.Fatalf("%s: %d bytes of profile, %v", path, n, err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s has mode %v; others must not read it", path, st.Mode().Perm())
		}
	}
	out, err := command(t, "run", "--cpuprofile", filepath.Join(dir, "no", "such", "dir"), "-c", "1+1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--cpuprofile") {
		t.Fatalf("an unwritable profile: %v\n%s; want a usage error naming --cpuprofile", err, out)
	}
}
