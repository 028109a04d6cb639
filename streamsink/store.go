package streamsink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Scheme prefixes an artifact id in references: "artifact://7.eval.log".
const Scheme = "artifact://"

// ErrBadRef is wrapped by [Store.Path] for a reference that names no
// artifact of the store.
var ErrBadRef = errors.New("streamsink: bad artifact reference")

// maxCreateTries bounds the search for a free sequence number.
const maxCreateTries = 10000

// Store is an artifacts directory. Ids are "<seq>.<ext>" with a sequence
// number that grows across processes: a file is created with O_EXCL, so two
// processes sharing the directory never get the same id. The directory is
// created on first use, so a Store for an unwritable place costs nothing
// until something is spilled (and then fails as a notice, not a cell).
type Store struct {
	dir string

	mu   sync.Mutex
	next int64 // 0: not yet scanned
}

// NewStore returns a store for dir.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// ArtifactsDir returns $PI_ARTIFACTS_DIR if set, else home/artifacts.
func ArtifactsDir(home string) string {
	if d := os.Getenv("PI_ARTIFACTS_DIR"); d != "" {
		return d
	}
	return filepath.Join(home, "artifacts")
}

// Dir returns the store's directory.
func (st *Store) Dir() string { return st.dir }

// Create creates a new empty artifact with the given extension ("eval.log",
// "png") and returns it open for writing with its id.
func (st *Store) Create(ext string) (*os.File, string, error) {
	if ext == "" || strings.ContainsAny(ext, `/\`) || strings.HasPrefix(ext, ".") {
		return nil, "", fmt.Errorf("streamsink: artifact extension %q: use a plain suffix such as \"eval.log\"", ext)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.next == 0 {
		if err := st.scan(); err != nil {
			return nil, "", err
		}
	}
	for range maxCreateTries {
		id := strconv.FormatInt(st.next, 10) + "." + ext
		st.next++
		f, err := os.OpenFile(filepath.Join(st.dir, id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, id, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", fmt.Errorf("streamsink: create artifact: %w", err)
		}
	}
	return nil, "", fmt.Errorf("streamsink: no free artifact id in %s after %d tries", st.dir, maxCreateTries)
}

// scan creates the directory and starts the sequence after the largest
// number any file in it begins with.
func (st *Store) scan() error {
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return fmt.Errorf("streamsink: artifacts directory: %w", err)
	}
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		return fmt.Errorf("streamsink: artifacts directory: %w", err)
	}
	st.next = 1
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), ".")
		if n, err := strconv.ParseInt(num, 10, 64); err == nil && n >= st.next {
			st.next = n + 1
		}
	}
	return nil
}

// WriteFile stores data as a new artifact and returns its id and path.
func (st *Store) WriteFile(ext string, data []byte) (id, path string, err error) {
	f, id, err := st.Create(ext)
	if err != nil {
		return "", "", err
	}
	path = f.Name()
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return "", "", fmt.Errorf("streamsink: write artifact %s: %w", id, werr)
	}
	return id, path, nil
}

// Path resolves an id or an "artifact://<id>" reference to the file path.
// It rejects references that could leave the directory.
func (st *Store) Path(ref string) (string, error) {
	id := strings.TrimPrefix(ref, Scheme)
	if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
		return "", fmt.Errorf("%w: %q; expected %s<seq>.<ext> such as %s1.eval.log", ErrBadRef, ref, Scheme, Scheme)
	}
	return filepath.Join(st.dir, id), nil
}
