package streamsink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
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
// processes sharing the directory never get the same id. Artifacts are mode
// 0600. The directory is prepared on first use (see [StoreOptions] for its
// mode), so a Store for an unwritable place costs nothing until something
// is spilled (and then fails as a notice, not a cell).
//
// In a directory the store owns (not [StoreOptions.UserDir]) every finished
// artifact triggers its limits: artifacts older than the retention go, then
// the oldest until the total fits MaxTotal. Never removed: an artifact still
// being written (by a Store of this process, or by another process where
// files can be locked) and the one with the newest id (so no id is handed
// out twice). An artifact whose lock cannot be tested (NFS without its
// lock manager, or whatever answers neither "locked" nor "free") is kept
// until it has gone unwritten for a day, so another process's artifact is
// not removed as it is written, and the directory still does not grow for
// good: it may hold up to a day's artifacts beyond its cap there.
type Store struct {
	dir string
	opt StoreOptions

	mu      sync.Mutex
	next    int64               // 0: not yet prepared
	writing map[string]*os.File // ids created and not yet finished
}

// StoreOptions configures a [Store]; zero fields take the defaults.
type StoreOptions struct {
	// MaxTotal caps the bytes of all artifacts in the directory, enforced
	// oldest first whenever an artifact is finished. 0 means
	// [DefaultMaxTotal]; negative means no cap.
	MaxTotal int64
	// Retention is how long an artifact is kept. 0 means
	// [DefaultRetention]; negative keeps artifacts until the cap needs room.
	Retention time.Duration
	// UserDir marks a directory that belongs to the user ($PI_ARTIFACTS_DIR):
	// nothing in it is ever removed (no cap, no retention, Prune does
	// nothing), and its mode is left as it is, but a directory that another
	// user owns (root aside), that others may write without the sticky bit,
	// or that is a link of another user's or under a directory of theirs is
	// refused, since they could replace or plant artifacts. A missing one
	// is made 0700 by one mkdir, in a directory that exists and would pass
	// as one above it, never with what is above it. Without UserDir
	// the store owns the directory: it is
	// created 0700, an existing one the user owns is tightened to 0700, and
	// one owned by another user is refused.
	UserDir bool
}

// DefaultMaxTotal is the default cap on a store's artifacts: room for many
// spilled outputs, not for a disk filled by a loop that prints.
const DefaultMaxTotal = 1 << 30

// MaxTotalEnv names the environment variable [StoreFromEnv] reads the cap from.
const MaxTotalEnv = "EVALHOST_ARTIFACTS_MAX"

// NewStore returns a store for dir, a directory it owns, with the default
// options.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// NewStoreWith returns a store for dir with the given options.
func NewStoreWith(dir string, o StoreOptions) *Store { return &Store{dir: dir, opt: o} }

// ArtifactsDir returns $PI_ARTIFACTS_DIR if set (made absolute against
// the working directory, as [StoreFromEnv] takes it), else home/artifacts.
func ArtifactsDir(home string) string {
	if d := os.Getenv("PI_ARTIFACTS_DIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	return filepath.Join(home, "artifacts")
}

// StoreFromEnv returns the store evalhost uses: $PI_ARTIFACTS_DIR as a
// UserDir when set, else home/artifacts, with MaxTotal from
// $EVALHOST_ARTIFACTS_MAX ("512M", "2G", a byte count; "0" for no cap). It
// writes nothing on disk: an own directory's limits are enforced as each
// artifact finishes, and by [Store.Enforce], which a long-lived process
// calls as it starts. Opening is thus cheap for a command that never
// spills: listing a week of artifacts cost every `run` milliseconds.
// A bad cap is an error naming the variable, its value and what it takes,
// and no store: a cap decides which of the user's outputs go, so a typo
// is not taken for the default. So is a $PI_ARTIFACTS_DIR that is not a
// directory and that the first spill could not make by one mkdir
// ([CheckUserDir]: a stat or two), found now rather than as each spill's
// notice. A relative $PI_ARTIFACTS_DIR is made absolute against the
// working directory, as EVALHOST_HOME is: a process that runs elsewhere
// (the background process of run --session, in /) is given it so, and
// the notice names the file where the user finds it.
func StoreFromEnv(home string) (*Store, error) {
	var o StoreOptions
	dir := os.Getenv("PI_ARTIFACTS_DIR")
	if o.UserDir = dir != ""; !o.UserDir {
		dir = filepath.Join(home, "artifacts")
	} else if err := CheckUserDir(dir, home); err != nil {
		return nil, err
	} else if abs, err := filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("PI_ARTIFACTS_DIR=%q: %w; set it to an absolute path", dir, err)
	} else {
		dir = abs
	}
	if v := os.Getenv(MaxTotalEnv); v != "" {
		n, err := parseSize(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w (the most the artifacts directory holds; default %s): set it so, or unset it",
				MaxTotalEnv, v, err, humanBytes(DefaultMaxTotal))
		}
		o.MaxTotal = n
		if n == 0 {
			o.MaxTotal = -1
		}
	}
	return NewStoreWith(dir, o), nil
}

// Enforce applies the limits of a directory the store owns now, as a
// finished artifact does: the retention, then the cap. It returns how many
// artifacts it removed; what stopped it costs only disk. A UserDir store
// removes nothing.
func (st *Store) Enforce() (int, error) {
	if st.opt.UserDir {
		return 0, nil
	}
	return st.limit(st.retention(), st.maxTotal())
}

// Dir returns the store's directory.
func (st *Store) Dir() string { return st.dir }

// Create creates a new empty artifact with the given extension ("eval.log",
// "png") and returns it open for writing with its id. Call [Store.Finish]
// with the id once it is written (or removed).
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
		live.mu.Lock()
		f, err := os.OpenFile(filepath.Join(st.dir, id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			if st.writing == nil {
				st.writing = make(map[string]*os.File)
			}
			st.writing[id] = f
			addLive(f)
			live.mu.Unlock()
			markWriting(f)
			return f, id, nil
		}
		live.mu.Unlock()
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", fmt.Errorf("streamsink: create artifact: %w", trustdir.ShownError(err))
		}
	}
	return nil, "", fmt.Errorf("streamsink: no free artifact id in %s after %d tries", trustdir.Shown(st.dir), maxCreateTries)
}

// scan prepares the directory and starts the sequence after the largest
// number any file in it begins with.
func (st *Store) scan() error {
	if err := prepareDir(st.dir, st.opt.UserDir); err != nil {
		return err
	}
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		return fmt.Errorf("streamsink: artifacts directory: %w", trustdir.ShownError(err))
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
	id, path, _, err = st.writeWith(ext, func(w io.Writer) (int64, error) {
		n, err := w.Write(data)
		return int64(n), err
	})
	return id, path, err
}

// writeWith stores what write writes as a new artifact, and returns its
// id, path and size; a failed write leaves no file.
func (st *Store) writeWith(ext string, write func(io.Writer) (int64, error)) (id, path string, n int64, err error) {
	f, id, err := st.Create(ext)
	if err != nil {
		return "", "", 0, err
	}
	path = f.Name()
	n, werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		st.Finish(id)
		return "", "", 0, fmt.Errorf("streamsink: write artifact %s: %w", id, werr)
	}
	st.Finish(id)
	return id, path, n, nil
}

// maxID is the longest artifact id Path takes: a file name's limit.
const maxID = 255

// Path resolves an id or an "artifact://<id>" reference to the file path.
// It rejects references that could leave the directory.
func (st *Store) Path(ref string) (string, error) {
	id := strings.TrimPrefix(ref, Scheme)
	if len(id) > maxID { // no file's name (NAME_MAX): said without the whole of it
		return "", fmt.Errorf("%w: a %d-byte id %q…; expected %s<seq>.<ext> such as %s1.eval.log", ErrBadRef, len(id), id[:32], Scheme, Scheme)
	}
	if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
		return "", fmt.Errorf("%w: %q; expected %s<seq>.<ext> such as %s1.eval.log", ErrBadRef, ref, Scheme, Scheme)
	}
	return filepath.Join(st.dir, id), nil
}
