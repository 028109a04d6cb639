package shell

import (
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/backend/backendtest"
	"github.com/evalhost/evalhost/internal/testkit"
)

func TestBackendConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Backend{
		Lang: backendtest.Shell,
		Start: func(t *testing.T, grace time.Duration) backend.Executor {
			return startShell(t, Options{Grace: grace})
		},
		Clean: func(t *testing.T) { testkit.Clean(t, 2*time.Minute) },
	})
}
