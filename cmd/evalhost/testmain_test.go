package main

import (
	"os"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestMain makes the environment hermetic before any test reads it: the
// in-process dispatch tests read EVALHOST_DEBUG and the like as the
// command does, and only tests that start Python scrubbed them, so which
// came first decided what the others saw (an EVALHOST_DEBUG=1 timeline on
// a refusal's stderr, under scripts/test.sh's hostile environment).
func TestMain(m *testing.M) {
	testkit.Hermetic()
	os.Exit(m.Run())
}
