package notebook

import (
	"context"
	"sync"
)

// local is the exclusion between the Locks of this process, keyed by the
// lock file's path (from the canonical notebook path), taken before the
// flock and released after it. flock alone does not give it on NFS, where
// Linux makes it an fcntl lock, which is the process's: two opens of the
// lock file in one process both get it.
var local struct {
	mu    sync.Mutex
	locks map[string]*localLock
}

// localLock is one lock file's in-process lock: ch holds a token while a
// Lock holds it; refs counts the Locks holding or waiting, so that the
// entry goes when none is left.
type localLock struct {
	ch   chan struct{}
	refs int
}

// lockLocal takes key's in-process lock, waiting until ctx ends (its
// error). A lock free at once is taken even when ctx has ended, as the
// flock is.
func lockLocal(ctx context.Context, key string) (unlock func(), err error) {
	local.mu.Lock()
	l := local.locks[key]
	if l == nil {
		if local.locks == nil {
			local.locks = make(map[string]*localLock)
		}
		l = &localLock{ch: make(chan struct{}, 1)}
		local.locks[key] = l
	}
	l.refs++
	local.mu.Unlock()
	unlock = func() {
		<-l.ch
		unref(key, l)
	}
	select {
	case l.ch <- struct{}{}:
		return unlock, nil
	default:
	}
	select {
	case l.ch <- struct{}{}:
		return unlock, nil
	case <-ctx.Done():
		unref(key, l)
		return nil, ctx.Err()
	}
}

func unref(key string, l *localLock) {
	local.mu.Lock()
	if l.refs--; l.refs == 0 {
		delete(local.locks, key)
	}
	local.mu.Unlock()
}
