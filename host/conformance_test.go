package host

import (
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/backend/backendtest"
)

func TestBackendConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Backend{
		Lang: backendtest.Python,
		Start: func(t *testing.T, grace time.Duration) backend.Executor {
			return startPy(t, func(o *Options) { o.Grace = grace })
		},
		Clean: func(t *testing.T) { checkClean(t, 2*time.Minute) },
	})
}
