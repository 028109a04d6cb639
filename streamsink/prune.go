package streamsink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultRetention is how long evalhost keeps the artifacts in its own
// directory: long enough to read back what an agent was pointed at, short
// enough that a day of bulk output does not fill the disk for good.
const DefaultRetention = 7 * 24 * time.Hour

// Prune removes the store's artifacts last written before now-olderThan and
// returns how many it removed. Only files named as the store names them
// ("<seq>.<ext>") are touched, and the newest sequence number is always
// kept, so a new artifact never takes an old one's id. A missing directory
// is nothing to prune.
func (st *Store) Prune(olderThan time.Duration) (int, error) {
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("streamsink: prune artifacts: %w", err)
	}
	newest, newestName := int64(-1), ""
	for _, e := range entries {
		if n, ok := artifactSeq(e.Name()); ok && n > newest {
			newest, newestName = n, e.Name()
		}
	}
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	var errs []error
	for _, e := range entries {
		if _, ok := artifactSeq(e.Name()); !ok || e.Name() == newestName || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(st.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("streamsink: prune artifacts: %w", err)
	}
	return removed, nil
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
