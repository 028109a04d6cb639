package streamsink

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultRetention is how long evalhost keeps the artifacts in its own
// directory: long enough to read back what an agent was pointed at, short
// enough that a day of bulk output does not fill the disk for good.
const DefaultRetention = 7 * 24 * time.Hour

// unverifiedIdle is how long an artifact whose lock cannot be tested must
// have gone unwritten before the limits remove it: far longer than a
// writer is silent, yet short enough that such a directory is still
// cleaned the next day.
const unverifiedIdle = 24 * time.Hour

// Prune removes the store's artifacts last written before now-olderThan and
// returns how many it removed. Only files named as the store names them
// ("<seq>.<ext>") are touched, and never the newest sequence number (so a
// new artifact never takes an old one's id) or one being written, by this
// Store or (where files can be locked) another process.
// A missing directory is nothing to prune; a UserDir store is never pruned.
func (st *Store) Prune(olderThan time.Duration) (int, error) {
	if st.opt.UserDir {
		return 0, nil
	}
	return st.limit(max(olderThan, 0), -1)
}

// Finish marks artifact id as written, or given up, and then, in a
// directory the store owns, enforces its retention and MaxTotal. It returns
// what stopped the clean-up, which costs only disk.
func (st *Store) Finish(id string) error {
	st.mu.Lock()
	f := st.writing[id]
	delete(st.writing, id)
	st.mu.Unlock()
	if f != nil {
		dropLive(f)
	}
	if st.opt.UserDir {
		return nil
	}
	_, err := st.limit(st.retention(), st.maxTotal())
	return err
}

func (st *Store) retention() time.Duration {
	if st.opt.Retention == 0 {
		return DefaultRetention
	}
	return st.opt.Retention // negative: no age limit
}

// MaxTotal is the cap the store keeps its own directory's artifacts
// under (negative: no cap), and whether it applies: a UserDir's
// artifacts are never removed, so ok is false for one.
func (st *Store) MaxTotal() (n int64, ok bool) {
	return st.maxTotal(), !st.opt.UserDir
}

func (st *Store) maxTotal() int64 {
	if st.opt.MaxTotal == 0 {
		return DefaultMaxTotal
	}
	return st.opt.MaxTotal // negative: no cap
}

// ArtifactLimit returns the most bytes one artifact may hold in the store,
// which a [Sink] keeps to while writing (see [Options.ArtifactCap]): the
// cap on the whole directory, since one artifact larger than that could
// never be kept beside another and would grow unchecked until finished.
// Zero means no bound: a UserDir, a store without a cap, or a nil store.
func (st *Store) ArtifactLimit() int64 {
	if st == nil || st.opt.UserDir {
		return 0
	}
	return max(st.maxTotal(), 0)
}

// artifactFile is one artifact the limits consider.
type artifactFile struct {
	name string
	seq  int64
	size int64
	info fs.FileInfo
	keep bool // the newest, or being written by this Store
}

// limit removes artifacts older than olderThan (none when negative), then
// the oldest until the total size is at most maxTotal (no cap when
// negative), and returns how many it removed.
func (st *Store) limit(olderThan time.Duration, maxTotal int64) (int, error) {
	files, err := st.artifacts()
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var total int64
	for _, f := range files {
		total += f.size
	}
	slices.SortFunc(files, func(a, b artifactFile) int {
		return cmp.Or(a.info.ModTime().Compare(b.info.ModTime()), cmp.Compare(a.seq, b.seq))
	})
	removed := 0
	var errs []error
	for _, f := range files {
		expired := olderThan >= 0 && f.info.ModTime().Before(now.Add(-olderThan))
		over := maxTotal >= 0 && total > maxTotal
		if f.keep || !expired && !over {
			continue
		}
		ok, err := removeUnused(filepath.Join(st.dir, f.name), f.info, now)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			total -= f.size // another store's limits removed it first
		case err != nil:
			errs = append(errs, err)
		case ok:
			total -= f.size
			removed++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("streamsink: prune artifacts: %w", err)
	}
	return removed, nil
}

// removeUnused removes the artifact at path, listed as listed, unless a
// Store of this process or (where its lock says so) another process writes
// it; removed is false when it was left. The listing may be stale: a name
// removed since may have been taken by a new artifact (a Store that scanned
// before), perhaps with the old inode, so the file is judged as it is now,
// and one written since it was listed is left for the next pass.
func removeUnused(path string, listed fs.FileInfo, now time.Time) (removed bool, err error) {
	live.mu.Lock()
	defer live.mu.Unlock()
	fi, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	if !os.SameFile(fi, listed) {
		return false, &fs.PathError{Op: "remove", Path: path, Err: fs.ErrNotExist} // the listed file is gone
	}
	if changed(fi, listed) || isLive(fi) {
		return false, nil
	}
	return removeIdle(path, fi, now.Sub(fi.ModTime()) >= unverifiedIdle)
}

// changed reports whether the file was written, or replaced, since it was
// stat'ed as was.
func changed(fi, was fs.FileInfo) bool {
	return !os.SameFile(fi, was) || !fi.ModTime().Equal(was.ModTime()) || fi.Size() != was.Size() || !fi.Mode().IsRegular()
}

// artifacts lists the store's files, marking those the limits must keep.
func (st *Store) artifacts() ([]artifactFile, error) {
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("streamsink: prune artifacts: %w", err)
	}
	st.mu.Lock()
	writing := make(map[string]bool, len(st.writing))
	for id := range st.writing {
		writing[id] = true
	}
	st.mu.Unlock()
	var files []artifactFile
	newest := -1
	for _, e := range entries {
		seq, ok := artifactSeq(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		f := artifactFile{name: e.Name(), seq: seq, size: info.Size(), info: info}
		f.keep = writing[f.name]
		if newest < 0 || seq > files[newest].seq {
			newest = len(files)
		}
		files = append(files, f)
	}
	if newest >= 0 {
		files[newest].keep = true
	}
	return files, nil
}

// artifactSeq reports the sequence number of a name the store gives
// ("<seq>.<ext>").
func artifactSeq(name string) (int64, bool) {
	num, ext, ok := strings.Cut(name, ".")
	if !ok || ext == "" || num == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	return n, err == nil && n > 0
}
