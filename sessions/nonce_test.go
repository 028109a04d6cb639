package sessions

import (
	"encoding/hex"
	"testing"
)

// TestRunNonceUnique: run nonces are 8 random bytes in hex and never repeat
// in a process (a repeat would let a leftover process call tools as a
// later cell).
func TestRunNonceUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		n := newRunNonce()
		if b, err := hex.DecodeString(n); err != nil || len(b) != 8 {
			t.Fatalf("nonce %q is not 16 hex digits (%v)", n, err)
		}
		if seen[n] {
			t.Fatalf("nonce %q repeated", n)
		}
		seen[n] = true
	}
}
