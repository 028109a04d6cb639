package gateway

import (
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/backend/backendtest"
)

func TestBackendConformance(t *testing.T) {
	needGateway(t)
	backendtest.Run(t, backendtest.Backend{
		Lang: backendtest.Python,
		Start: func(t *testing.T, grace time.Duration) backend.Executor {
			// ownKernel checks for leaks and closes the kernel.
			return ownKernel(t, KernelOptions{Grace: grace})
		},
	})
}
