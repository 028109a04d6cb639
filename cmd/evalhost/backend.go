package main

import (
	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/sessions"
)

// backendFlags are shared by run, serve and nb run; config reads the rest
// of the choice from the environment.
type backendFlags struct {
	backend string
	shared  bool
}

func (b *backendFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&b.backend, "backend", "", `Python backend: "runner" (evalhost's own, the default) or "gateway" (Jupyter kernels; `+
		`the default when PI_PYTHON_GATEWAY_URL is set; EVALHOST_BACKEND sets it too)`)
	fs.BoolVar(&b.shared, "shared-gateway", true, "use the shared local kernel gateway (the only local mode)")
}

func (b *backendFlags) choice() config.Backend {
	return config.Backend{Name: b.backend, NoSharedGateway: !b.shared}
}

// resolvedGateway says whether b comes to the gateway backend (an unknown
// name is refused later, where the backend is made): what run refuses
// there, python3's options and a directory or zip application.
func resolvedGateway(b config.Backend) bool {
	name, err := b.Resolved()
	return err == nil && name == config.BackendGateway
}

// starters forwards to config.Starters. home "" is a home evalhostHome
// could not accept: the error says why.
func (b *backendFlags) starters(home string) (map[string]sessions.Starter, error) {
	if home == "" {
		if _, err := config.Home(); err != nil {
			return nil, err
		}
	}
	return config.Starters(home, b.choice())
}

// toolMode forwards to config.Languages.
func toolMode() ([]string, error) { return config.Languages() }
