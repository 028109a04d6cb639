package sessions

import (
	crand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"sync"
)

// runNonces makes the random part of run ids. A run id is what the tool
// bridge accepts a cell's calls under, and the cell itself sees it
// (EVALHOST_RUN), so the part must be unpredictable from every run id seen
// before: a secret prefix and a counter would not do, since the prefix is
// in each id. ChaCha8 is a cryptographically strong generator whose output
// does not reveal its state; seeded once from the OS, it costs a few
// nanoseconds a cell where crypto/rand cost a getrandom system call.
var runNonces struct {
	once sync.Once
	mu   sync.Mutex
	rng  *rand.ChaCha8
}

// newRunNonce returns 16 hex digits no one can predict.
func newRunNonce() string {
	runNonces.once.Do(func() {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // never fails on Linux (Go 1.24+ crypto/rand)
		runNonces.rng = rand.NewChaCha8(seed)
	})
	var b [8]byte
	runNonces.mu.Lock()
	_, _ = runNonces.rng.Read(b[:])
	runNonces.mu.Unlock()
	return hex.EncodeToString(b[:])
}
