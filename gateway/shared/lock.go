package shared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Lock timing: the holder rewrites its heartbeat every lockBeat; a lock whose
// heartbeat is older than lockStale, or whose pid is dead, is taken over.
var (
	lockBeat  = time.Second
	lockStale = 15 * time.Second
	lockPoll  = 50 * time.Millisecond
)

// lockState is the content of gateway.lock.
type lockState struct {
	PID       int   `json:"pid"`
	Heartbeat int64 `json:"heartbeat"` // unix milliseconds
}

// heldLock is a taken gateway.lock with its heartbeat goroutine.
type heldLock struct {
	path string
	stop chan struct{}
	wg   sync.WaitGroup
}

// takeLock creates path exclusively, waiting while a live holder has it and
// taking over a stale one.
func takeLock(ctx context.Context, path string) (*heldLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("gateway lock dir: %w", err)
	}
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.Write(lockContent())
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				_ = os.Remove(path)
				return nil, fmt.Errorf("write gateway lock %s: %w", path, werr)
			}
			l := &heldLock{path: path, stop: make(chan struct{})}
			l.wg.Add(1)
			go l.beat()
			return l, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create gateway lock %s: %w", path, err)
		}
		breakIfStale(path)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for gateway lock %s (held by %s): %w", path, describeLock(path), ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

func lockContent() []byte {
	raw, _ := json.Marshal(lockState{PID: os.Getpid(), Heartbeat: time.Now().UnixMilli()})
	return raw
}

// breakIfStale removes the lock when its holder is dead or silent. It
// re-reads the file just before removing it, so a lock that a live process
// took in between is left alone.
func breakIfStale(path string) {
	raw, err := os.ReadFile(path)
	if err != nil || !lockIsStale(path, raw) {
		return
	}
	if again, err := os.ReadFile(path); err == nil && string(again) == string(raw) {
		_ = os.Remove(path)
	}
}

func lockIsStale(path string, raw []byte) bool {
	var st lockState
	if json.Unmarshal(raw, &st) != nil || st.PID <= 0 {
		// Half-written or foreign: judge by age alone.
		fi, err := os.Stat(path)
		return err == nil && time.Since(fi.ModTime()) > lockStale
	}
	if !pidAlive(st.PID) {
		return true
	}
	return time.Since(time.UnixMilli(st.Heartbeat)) > lockStale
}

func describeLock(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	var st lockState
	if json.Unmarshal(raw, &st) != nil {
		return "an unreadable lock"
	}
	return "pid " + strconv.Itoa(st.PID)
}

// beat refreshes the heartbeat until release.
func (l *heldLock) beat() {
	defer l.wg.Done()
	t := time.NewTicker(lockBeat)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			_ = writeFileAtomic(l.path, lockContent(), 0o600)
		}
	}
}

// release stops the heartbeat and removes the lock.
func (l *heldLock) release() {
	close(l.stop)
	l.wg.Wait()
	_ = os.Remove(l.path)
}

// writeFileAtomic writes data to a temporary file beside path and renames it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
