package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/gateway"
	"github.com/evalhost/evalhost/sessions"
)

// Backends for Python cells.
const (
	backendRunner  = "runner"
	backendGateway = "gateway"
)

// backendFlags are shared by run, serve and nb run.
type backendFlags struct {
	backend string
	shared  bool
}

func (b *backendFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&b.backend, "backend", "", `Python backend: "runner" (evalhost's own, the default) or "gateway" (Jupyter kernels; `+
		`the default when PI_PYTHON_GATEWAY_URL is set; EVALHOST_BACKEND sets it too)`)
	fs.BoolVar(&b.shared, "shared-gateway", true, "use the shared local kernel gateway (the only local mode)")
}

// starters picks the Python backend: --backend, then EVALHOST_BACKEND, then
// the gateway when PI_PYTHON_GATEWAY_URL is set, else the runner.
func (b *backendFlags) starters(home string) (map[string]sessions.Starter, error) {
	choice := b.backend
	if choice == "" {
		choice = os.Getenv("EVALHOST_BACKEND")
	}
	url := os.Getenv("PI_PYTHON_GATEWAY_URL")
	if choice == "" && url != "" {
		choice = backendGateway
	}
	starters := sessions.DefaultStarters(home)
	switch choice {
	case "", backendRunner:
		return starters, nil
	case backendGateway:
		if url == "" {
			if err := gateway.RequireShared(b.shared); err != nil {
				return nil, err
			}
		}
		starters[sessions.LangPython] = sessions.GatewayStarter(sessions.GatewayConfig{
			URL: url, Token: os.Getenv("PI_PYTHON_GATEWAY_TOKEN"), Home: home})
		return starters, nil
	default:
		return nil, fmt.Errorf("unknown backend %q: use %q or %q", choice, backendRunner, backendGateway)
	}
}
