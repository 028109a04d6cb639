package notebook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Load reads and validates the notebook at path. A missing file is an error
// matching fs.ErrNotExist; use LoadOrNew to start from an empty notebook.
func Load(path string) (*Notebook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read notebook: %w", err)
	}
	nb, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nb, nil
}

// LoadOrNew is Load, but a missing file gives an empty nbformat 4.5 notebook.
func LoadOrNew(path string) (*Notebook, error) {
	nb, err := Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	return nb, err
}

// Save validates the notebook's JSON and writes it to path atomically
// (WriteFile). On any error the file is left exactly as it was.
func (nb *Notebook) Save(path string) error {
	data := nb.Bytes()
	if _, err := Parse(data); err != nil {
		return fmt.Errorf("refusing to write %s, the result would be invalid: %w", path, err)
	}
	return WriteFile(path, data)
}

// WriteFile replaces path with data so that readers see the old file or
// the new one, never a part: it writes a temp file in the same directory,
// fsyncs it, renames it over path and fsyncs the directory. The file keeps
// its permission bits (0644 for a new file). A symlink is written through
// (its target is replaced, the link stays) and a read-only file (no write
// bit) is refused, as an in-place write would be. On error path is
// unchanged and the temp file is removed.
func WriteFile(path string, data []byte) (err error) {
	if target, linkErr := filepath.EvalSymlinks(path); linkErr == nil {
		path = target
	}
	perm := fs.FileMode(0o644)
	if st, statErr := os.Stat(path); statErr == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write notebook %s: not a regular file", path)
		}
		perm = st.Mode().Perm()
		if perm&0o222 == 0 {
			return fmt.Errorf("write notebook %s: the file is read-only (mode %04o); make it writable (chmod u+w) to change it", path, perm)
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write notebook %s: fsync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write notebook %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable; file systems that cannot fsync a
// directory still have the new file, so its error is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
