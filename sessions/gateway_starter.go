package sessions

import (
	"context"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/evalhost/evalhost/gateway"
	"github.com/evalhost/evalhost/gateway/shared"
)

// GatewayConfig runs Python cells in Jupyter kernels behind a kernel
// gateway: an external one (URL, as PI_PYTHON_GATEWAY_URL gives it; Jupyter
// Enterprise Gateway too) or, with no URL, the shared local gateway under
// Home that the first user starts.
type GatewayConfig struct {
	URL   string
	Token string
	Home  string
	// Environ is the host environment the shared local gateway starts
	// with, filtered as an interpreter's is (later evalhost processes reuse
	// the gateway; its kernels get their own session's environment, not
	// this); nil means os.Environ(). An external gateway's kernel requests
	// carry its KERNEL_* values and KERNEL_USERNAME (gateway.KernelEnvFrom).
	Environ []string
}

// gatewayStartTimeout covers starting the shared gateway itself, which
// takes seconds, before the kernel's own start.
const gatewayStartTimeout = 90 * time.Second

// GatewayStarter starts a kernel per Python interpreter of a session.
func GatewayStarter(g GatewayConfig) Starter {
	var (
		once   sync.Once
		client *gateway.Client
		err    error
	)
	external := func() (*gateway.Client, error) {
		once.Do(func() {
			client, err = gateway.NewClient(gateway.Config{URL: g.URL, Token: g.Token,
				KernelEnv: gateway.KernelEnvFrom(gatewayEnviron(g.Environ))})
		})
		return client, err
	}
	return func(ctx context.Context, spec Spec) (Executor, error) {
		if len(spec.PythonArgs) > 0 {
			return nil, errGatewayPythonArgs
		}
		opts := gateway.KernelOptions{
			Cwd:          spec.Cwd,
			Env:          kernelEnv(spec.Env),
			Modules:      spec.Modules,
			Grace:        spec.Grace,
			StartTimeout: max(spec.StartTimeout, gatewayStartTimeout),
		}
		var k *gateway.Kernel
		var err error
		if g.URL != "" {
			c, cerr := external()
			if cerr != nil {
				return nil, cerr
			}
			k, err = c.StartKernel(ctx, opts)
		} else {
			k, _, err = shared.Local{Home: g.Home, Python: spec.Python.Path,
				Options: shared.AcquireOptions{Env: gatewayEnv(g.Environ)}}.StartKernel(ctx, opts)
		}
		if err != nil {
			return nil, err
		}
		return k, nil
	}
}

// gatewayEnv is what the shared gateway may inherit: no API keys or tokens.
func gatewayEnv(environ []string) []string {
	return FilterEnv(gatewayEnviron(environ))
}

func gatewayEnviron(environ []string) []string {
	if environ == nil {
		return os.Environ()
	}
	return environ
}

// kernelEnv is the session's environment, which the kernel applies inside
// (the gateway launches it with PATH alone, and unsets that too when the
// session has none).
func kernelEnv(env []string) map[string]*string {
	out := make(map[string]*string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = &v
		}
	}
	return out
}
