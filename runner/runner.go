package runner

import (
	"bytes"
	"crypto/sha256"
	_ "embed" // runner.py and prelude.py
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed runner.py
var source []byte

//go:embed core.py
var core []byte

//go:embed ipy.py
var ipy []byte

//go:embed prelude.py
var prelude []byte

// Version is the runner version runner.py reports in its ready frame.
const Version = "1.1"

// files are what Path writes, by name.
var files = []struct {
	name string
	data *[]byte
}{{"runner.py", &source}, {"core.py", &core}, {"ipy.py", &ipy}, {"prelude.py", &prelude}}

// Source returns runner.py, the bootstrap the host starts; it loads core.py
// (the runner proper) from its directory through a bytecode cache.
func Source() []byte { return bytes.Clone(source) }

// Prelude returns prelude.py, the helpers every Python session starts with.
func Prelude() string { return string(prelude) }

// Hash returns the hex SHA-256 over runner.py, core.py and prelude.py; it names the
// cache directory, so a changed runner never reuses an old copy.
func Hash() string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.name, len(*f.data))
		h.Write(*f.data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Path makes sure <cacheDir>/runner-<16 hex of Hash>/ holds runner.py,
// core.py and prelude.py and returns the path of runner.py. The directory is written
// once, atomically (a temporary directory renamed into place), and reused
// while its content matches; a damaged copy is replaced.
func Path(cacheDir string) (string, error) {
	if cacheDir == "" {
		return "", errors.New("runner: empty cache dir: pass a directory such as ~/.evalhost/cache")
	}
	dir := filepath.Join(cacheDir, "runner-"+Hash()[:16])
	main := filepath.Join(dir, "runner.py")
	if intact(dir) {
		return main, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("runner: create cache dir: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".runner-tmp-")
	if err != nil {
		return "", fmt.Errorf("runner: create temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, f.name), *f.data, 0o644); err != nil {
			return "", fmt.Errorf("runner: write %s: %w", f.name, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("runner: chmod temp dir: %w", err)
	}
	if err := install(tmp, dir); err != nil {
		return "", err
	}
	return main, nil
}

// install renames tmp to dir. When dir already exists (another process won
// the race, or an old copy was damaged) an intact copy is kept and anything
// else is moved aside and replaced.
func install(tmp, dir string) error {
	err := os.Rename(tmp, dir)
	if err == nil || intact(dir) {
		return nil
	}
	trash, terr := os.MkdirTemp(filepath.Dir(dir), ".runner-old-")
	if terr != nil {
		return fmt.Errorf("runner: replace damaged %s: %w", dir, terr)
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(dir, filepath.Join(trash, "old")); err != nil && !intact(dir) {
		return fmt.Errorf("runner: move damaged %s aside: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil && !intact(dir) {
		return fmt.Errorf("runner: install %s: %w", dir, err)
	}
	return nil
}

// intact reports whether dir holds exactly the embedded files.
func intact(dir string) bool {
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil || !bytes.Equal(b, *f.data) {
			return false
		}
	}
	return true
}
