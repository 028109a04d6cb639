//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/evalhost/evalhost/internal/flock"
)

// TestLocksOfOneProcessExcludeEachOther: two Locks of one notebook in one
// process exclude each other whatever the file system. On NFS Linux makes
// flock an fcntl lock, which is the process's, so two opens of the lock
// file in one process both get it; no test can mount NFS, so the flock is
// faked as always had, and the exclusion must hold by itself.
func TestLocksOfOneProcessExcludeEachOther(t *testing.T) {
	for _, fake := range []struct {
		name string
		try  func(*os.File) error
	}{
		{"flock", flock.TryLock},
		{"flock always had, as NFS within a process", func(*os.File) error { return nil }},
	} {
		t.Run(fake.name, func(t *testing.T) {
			lockTry = fake.try
			t.Cleanup(func() { lockTry = flock.TryLock })
			dir := t.TempDir()
			path := filepath.Join(dir, "n.ipynb")
			link := filepath.Join(dir, "link.ipynb")
			if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("n.ipynb", link); err != nil {
				t.Skip("no symlinks:", err)
			}

			first, err := Lock(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			// A Lock whose context has ended while another holds the lock,
			// by either spelling, gives up instead of taking it.
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			for _, p := range []string{path, link} {
				if lk, err := Lock(ended, p); !errors.Is(err, ErrLocked) {
					if err == nil {
						lk.Unlock()
					}
					t.Errorf("Lock(%s) while another goroutine holds it: %v, want ErrLocked", p, err)
				}
			}
			// One that waits gives up when its context ends...
			waiting, stop := context.WithCancel(context.Background())
			gaveUp := make(chan error, 1)
			go func() {
				lk, err := Lock(waiting, link)
				if err == nil {
					lk.Unlock()
				}
				gaveUp <- err
			}()
			stop()
			if err := <-gaveUp; !errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) {
				t.Errorf("a waiting Lock whose context ends: %v, want ErrLocked and context.Canceled", err)
			}
			// ...and gets the lock once it is released.
			got := make(chan error, 1)
			go func() {
				lk, err := Lock(context.Background(), link)
				if err == nil {
					err = lk.Unlock()
				}
				got <- err
			}()
			if err := first.Unlock(); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Errorf("Lock after release: %v", err)
			}

			// Goroutines that each lock, load, insert and save lose nothing.
			nb, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			cells := nb.Len()
			const editors = 8
			errs := make([]error, editors)
			var wg sync.WaitGroup
			for i := range editors {
				wg.Go(func() { errs[i] = lockedInsert(path, fmt.Sprint("cell ", i)) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Error(err)
			}
			if nb, err := Load(path); err != nil || nb.Len() != cells+editors {
				t.Errorf("after %d locked edits of %d cells: %d cells (%v), want %d", editors, cells, nb.Len(), err, cells+editors)
			}
		})
	}
}
