//go:build linux

package host

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/runner"
)

// TestStartBootsFromBytecode: the first Start under an interpreter writes
// runner.py's bytecode, the next starts from it; one whose bytecode python
// refuses (another version's magic number, a file cut short) starts from
// runner.py instead, with nothing of it shown, and writes it anew. An ask
// inherited from the environment is not acted on.
func TestStartBootsFromBytecode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, path string)
		remade bool // the start after spoil rewrites the bytecode
	}{
		{"as written", func(*testing.T, string) {}, false},
		{"another magic number", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte) []byte { b[0] ^= 0xff; return b })
		}, true},
		{"cut short", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte) []byte { return b[:len(b)/2] })
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkClean(t, time.Minute)
			path, err := runner.Path(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			py := python(t)
			// The host's own ask for another name: a runner acting on it
			// would write that file.
			ask := strings.Fields(runner.BootFor(path, py).Env[0])
			stray := filepath.Join(filepath.Dir(path), "__pycache__", "runner.0123456789abcdef.pyc")
			ask[1] = filepath.Base(stray)
			boot := func() string {
				t.Helper()
				p := startPy(t, func(o *Options) {
					o.Runner = path
					o.Env = append(os.Environ(), strings.Join(ask, " "))
				})
				r := execute(t, p, context.Background(),
					"import os, sys; print(os.environ.get('EVALHOST_BOOT'), open('/proc/self/cmdline').read().split(chr(0))[-2])")
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				env, file, _ := strings.Cut(strings.TrimSpace(r.stdout()), " ")
				if env != "None" {
					t.Errorf("the cell sees EVALHOST_BOOT=%s", env)
				}
				if r.err != nil || r.stderr() != "" {
					t.Errorf("cell: err %v, stderr %q", r.err, r.stderr())
				}
				return file
			}
			if got := boot(); got != path {
				t.Fatalf("first start from %q, want runner.py %q", got, path)
			}
			b := runner.BootFor(path, py)
			if !b.FromBytecode() {
				t.Fatalf("no bytecode after the first start: %+v", b)
			}
			tc.spoil(t, b.Bytecode)
			spoilt, _ := os.ReadFile(b.Bytecode)
			want := b.Bytecode
			if tc.remade {
				want = path
			}
			if got := boot(); got != want {
				t.Fatalf("start after it was spoilt from %q, want %q", got, want)
			}
			if now, err := os.ReadFile(b.Bytecode); err != nil || bytes.Equal(now, spoilt) != !tc.remade {
				t.Errorf("bytecode rewritten: %v, want %v (err %v)", !bytes.Equal(now, spoilt), tc.remade, err)
			}
			if got := boot(); got != b.Bytecode {
				t.Errorf("the start after from %q, want the bytecode", got)
			}
			if _, err := os.Lstat(stray); err == nil {
				t.Errorf("the runner acted on an inherited %s", runner.BootEnv)
			}
		})
	}
}

// rewrite replaces the file at path with edit of its content, as this user.
func rewrite(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o600); err != nil {
		t.Fatal(err)
	}
}
