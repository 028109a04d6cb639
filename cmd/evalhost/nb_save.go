package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/notebook"
)

// Lock waits for the notebook saver: a progress save gives up soon (the
// next cell's save tries again), the final save waits as long as an edit
// does for a stuck holder.
const (
	progressLockWait = 2 * time.Second
	finalLockWait    = time.Minute
)

// notebookSaver writes an executed notebook as its run goes: after every
// cell (with papermill's metadata, as each starts, which holds the end of
// the cell before: see atStart), atomically, under
// the notebook's lock (taken for each write only, not while cells run) and
// checked (notebook.Save's compare-and-save), so
// that whatever ends the run leaves a valid notebook holding every cell
// that finished, and no other edit of the target is undone. When the
// target changes on disk during the run (an edit, another run), the
// executed notebook goes elsewhere and diverted says where: to
// FILE.nbconvert.ipynb when the target was the input, else to a new file
// beside the target.
type notebookSaver struct {
	input, out, converted string
	changed               string                  // the target that changed on disk, when diverted
	conflict              *notebook.ConflictError // how it changed
	diverted              string                  // where the notebook goes instead
	// warn tells the user at once when a progress save fails (disk full),
	// not only at the end; saved is the 1-based position of the last cell
	// whose save succeeded (0: none), failing whether the last one failed.
	// Messages name cells by notebook index, as the run's "cell N: error"
	// lines and nb view's "cell:N" do.
	warn    func(string)
	saved   int
	ended   int // the 1-based position of the last cell that ended
	failing bool
	// atStart: a cell's start is saved too (papermill's metadata), and
	// its save holds the end of the cell before it, which is then left to
	// it (dirty) rather than saved twice: the next cell starts within a
	// millisecond, and idle saves an end that nothing follows soon. Each
	// save writes the whole notebook: two per cell made a run of 5,000
	// fast cells 2-4 times as long.
	atStart bool
	dirty   bool
}

func newNotebookSaver(input, out string, inplace bool) *notebookSaver {
	converted := strings.TrimSuffix(input, ".ipynb") + ".nbconvert.ipynb"
	switch {
	case inplace:
		out = input
	case out == "":
		out = converted
	}
	return &notebookSaver{input: input, out: out, converted: converted}
}

// written is where the notebook is (last) written.
func (s *notebookSaver) written() string {
	if s.diverted != "" {
		return s.diverted
	}
	return s.out
}

// check fails when the target cannot be written (its directory missing or
// not writable, the file read-only, its lock not to be made), so that a run
// is refused before its cells run, not after, when their outputs would be
// lost.
func (s *notebookSaver) check() error {
	return lockedSave(s.out, finalLockWait, notebook.CheckWritable)
}

// progress writes nb after cell (its notebook index), unsynced (an fsync
// per cell cost more than the cells of a small notebook): it guards against
// evalhost's death, and finish's write syncs. The first failure of a
// series is said at once (warn); the run goes on, trying after each cell.
func (s *notebookSaver) progress(cell int, nb *notebook.Notebook) {
	s.ended = cell + 1
	if s.atStart {
		s.dirty = true // the next start's save, or idle's
		return
	}
	s.write(nb, fmt.Sprintf("after cell %d", cell))
}

// idle writes the end of the last cell when no cell started soon after
// it (nbrun.Options.OnIdle).
func (s *notebookSaver) idle(nb *notebook.Notebook) {
	if s.dirty {
		s.write(nb, fmt.Sprintf("after cell %d", s.ended-1))
	}
}

// started writes nb as cell (its notebook index) starts, as progress does,
// as papermill saves at each cell's start: killed while the cell runs, the
// run leaves the notebook saying it runs (and the markdown before it
// passed), not pending, and holding the cells before it.
func (s *notebookSaver) started(cell int, nb *notebook.Notebook) {
	s.write(nb, fmt.Sprintf("as cell %d started", cell))
}

func (s *notebookSaver) write(nb *notebook.Notebook, when string) {
	err := s.save(progressLockWait, nb.SaveUnsynced)
	switch {
	case err == nil:
		s.saved, s.failing, s.dirty = s.ended, false, false
	case !s.failing:
		s.failing = true
		if s.warn != nil {
			s.warn(fmt.Sprintf("could not save the notebook %s: %v; the run goes on and tries again with each cell (%s)",
				when, err, s.holds()))
		}
	}
}

// holds says what the target holds of this run.
func (s *notebookSaver) holds() string {
	if s.saved == 0 {
		return trustdir.Shown(s.written()) + " holds no cell of this run"
	}
	return fmt.Sprintf("%s holds the outputs up to cell %d", trustdir.Shown(s.written()), s.saved-1)
}

// rescue writes nb to a new file in the temp directory when its target
// could not be written (a full disk), so that the run's outputs are not
// lost; it returns what to tell the user.
func (s *notebookSaver) rescue(nb *notebook.Notebook) string {
	name, err := s.rescueFile(nb)
	if err == nil {
		return fmt.Sprintf("%s; the executed notebook was written to %s instead", s.holds(), trustdir.Shown(name))
	}
	return fmt.Sprintf("%s; writing it to the temp directory failed too (%v), so the outputs of later cells are lost", s.holds(), trustdir.ShownError(err))
}

// rescueFile writes nb to a new file in the temp directory and names it.
func (s *notebookSaver) rescueFile(nb *notebook.Notebook) (string, error) {
	base := strings.TrimSuffix(filepath.Base(s.written()), ".ipynb")
	f, err := os.CreateTemp("", base+".evalhost-*.ipynb")
	if err != nil {
		return "", err
	}
	f.Close()
	// Not under a lock: no one else writes this new name, and a lock file
	// beside it in the shared temp directory is one more thing that can
	// fail (another user's file or link planted at its name, a file system
	// without flock) where nothing else may.
	if err = nb.Save(f.Name()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// finish writes nb validated and synced (notebook.Save).
func (s *notebookSaver) finish(nb *notebook.Notebook) error {
	return s.save(finalLockWait, nb.Save)
}

func (s *notebookSaver) save(wait time.Duration, save func(string) error) error {
	target := s.written()
	err := lockedSave(target, wait, save)
	if !errors.Is(err, notebook.ErrConflict) || s.diverted != "" {
		return err
	}
	s.changed = target
	errors.As(err, &s.conflict)
	made := false
	if s.diverted, made, err = s.divertTarget(target); err != nil {
		return err
	}
	if err = lockedSave(s.diverted, wait, save); err != nil && made {
		// No empty file is left to look like a broken notebook; the next
		// save diverts again.
		removeIfEmpty(s.diverted)
		s.diverted = ""
	}
	return err
}

// changeSaid says how the target changed while the cells ran, from the
// save's conflict, and what was (not) done about it: "X was removed (or
// moved away) while its cells ran, so it was not written again".
func (s *notebookSaver) changeSaid() string {
	name := trustdir.Shown(s.changed)
	switch {
	case s.conflict != nil && !s.conflict.Found.Exists():
		return name + " was removed (or moved away) while its cells ran, so it was not written again"
	case s.conflict != nil && s.conflict.Replaced:
		return name + " was replaced by another file while its cells ran (one renamed over it, as an editor's save, " +
			"mv or git checkout does, or a symlink on its way repointed); not overwriting it"
	}
	return name + " changed on disk while its cells ran (another edit or program wrote it); not overwriting it, which would undo that change"
}

// changeRemedy is what the user may do about changeSaid's change: the
// run's outputs are in the diverted file.
func (s *notebookSaver) changeRemedy() string {
	mv := "mv " + shellArg(s.diverted) + " " + shellArg(s.changed)
	switch {
	case s.conflict != nil && !s.conflict.Found.Exists():
		return "move it there if the notebook is to stay (" + mv + ")"
	case s.conflict != nil && s.conflict.Replaced:
		return "compare the two, and keep the run's outputs with " + mv + ", or run the new " + trustdir.Shown(s.changed)
	}
	return "compare the two, and keep the run's outputs with " + mv + ", or run " + trustdir.Shown(s.changed) + " again"
}

// shellArg is path as one word of a command line to copy: as it is when
// plain, else single-quoted, or as trustdir.Shown prints what a terminal
// must not get raw.
func shellArg(path string) string {
	if shown := trustdir.Shown(path); shown != path {
		return shown
	}
	if strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:@%+=,-") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// removeIfEmpty removes path if it is an empty regular file.
func removeIfEmpty(path string) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(path)
	}
}

// divertTarget names where the notebook goes when target changed on disk,
// and whether it made that file (empty) for it.
func (s *notebookSaver) divertTarget(target string) (string, bool, error) {
	// The input by name too: --inplace's target removed or moved away.
	if (target == s.input || sameFile(target, s.input)) && !sameFile(s.converted, s.input) {
		made, err := narrowMode(s.converted, target)
		if err != nil {
			return "", false, fmt.Errorf("%s changed on disk while its cells ran, and %s could not be made as private as it: %w",
				trustdir.Shown(target), trustdir.Shown(s.converted), trustdir.ShownError(err))
		}
		return s.converted, made, nil
	}
	f, err := os.CreateTemp(filepath.Dir(target), strings.TrimSuffix(filepath.Base(target), ".ipynb")+".evalhost-*.ipynb")
	if err != nil {
		return "", false, fmt.Errorf("%s changed on disk while its cells ran, and no other file could be made for the result: %w",
			trustdir.Shown(target), trustdir.ShownError(err))
	}
	f.Close()
	return f.Name(), true, nil
}

// narrowMode makes copy, which is to hold the notebook at like's place,
// readable by no one like is not: made new with like's mode, or an earlier
// copy's mode cut down to it (a save keeps the file's mode). Without like
// (removed), a new copy gets the umask's mode, as any new notebook.
// It reports whether it made copy.
func narrowMode(copy, like string) (bool, error) {
	st, err := os.Stat(like)
	if err != nil {
		return false, nil
	}
	perm := st.Mode().Perm()
	f, err := os.OpenFile(copy, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err == nil {
		return true, f.Close()
	}
	cs, err := os.Stat(copy)
	if err != nil || cs.Mode().Perm()&^perm == 0 {
		return false, nil // the save says what is wrong with it
	}
	return false, os.Chmod(copy, cs.Mode().Perm()&perm)
}

// lockedSave runs save(path) holding path's notebook lock.
func lockedSave(path string, wait time.Duration, save func(string) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	lk, err := notebook.Lock(ctx, path)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	return save(path)
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
