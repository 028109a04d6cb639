package notebook

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestLockLocalLeavesNoEntry: waiters that give up and holders that let go
// leave the in-process table as they found it, and none takes a lock that
// is held.
func TestLockLocalLeavesNoEntry(t *testing.T) {
	const key = "/nowhere/.n.ipynb.evalhost-lock"
	unlock, err := lockLocal(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			if u, err := lockLocal(ctx, key); err == nil {
				u()
				errs[i] = errors.New("took a held lock")
			} else {
				errs[i] = nil
			}
		})
	}
	cancel()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
	unlock()
	// Waiters that do get it, one after another.
	for range 16 {
		wg.Go(func() {
			u, err := lockLocal(context.Background(), key)
			if err != nil {
				t.Error(err)
				return
			}
			u()
		})
	}
	wg.Wait()
	local.mu.Lock()
	n := len(local.locks)
	local.mu.Unlock()
	if n != 0 {
		t.Errorf("%d entries left in the in-process lock table, want none", n)
	}
}
