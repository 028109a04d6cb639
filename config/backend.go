package config

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/evalhost/evalhost/gateway"
	"github.com/evalhost/evalhost/gateway/shared"
	"github.com/evalhost/evalhost/sessions"
)

// Python backends.
const (
	BackendRunner  = "runner"  // evalhost's own runner.py (the default)
	BackendGateway = "gateway" // Jupyter kernels behind a kernel gateway
)

// ErrBackend is matched by an unknown backend name.
var ErrBackend = errors.New("unknown backend")

// Backend chooses how Python cells run. The zero value takes the choice
// from the environment.
type Backend struct {
	// Name is BackendRunner or BackendGateway; "" means $EVALHOST_BACKEND,
	// else the gateway when $PI_PYTHON_GATEWAY_URL is set, else the runner.
	Name string
	// NoSharedGateway asks for a private local gateway, which evalhost does
	// not offer (the reference runtime's sharedGateway=false): with the
	// gateway backend and no URL it is an error.
	NoSharedGateway bool
}

// Starters returns the starter of each cell language for a home: the
// backend's Python, the sh shell, and for languages PI_PY turned off a
// starter that fails with a message saying so.
func Starters(home string, b Backend) (map[string]sessions.Starter, error) {
	langs, err := Languages()
	if err != nil {
		return nil, err
	}
	if err := CheckGatewayURL(); err != nil {
		return nil, err
	}
	starters, err := backendStarters(home, b)
	if err != nil {
		return nil, err
	}
	for lang := range starters {
		if !slices.Contains(langs, lang) {
			starters[lang] = disabledStarter(lang)
		}
	}
	return starters, nil
}

// CheckGatewayURL refuses a PI_PYTHON_GATEWAY_URL that is not a kernel
// gateway's address (gateway.ParseURL: http:// or https://, a host, no
// white space, query or fragment), with an error naming the variable, its
// value, what is wrong and what it takes; unset is fine. Only the text is
// read: the gateway is not contacted. It is refused whichever backend is
// chosen, as EVALHOST_ARTIFACTS_MAX is whether or not PI_ARTIFACTS_DIR
// takes its place: a value set is meant, and a typo found when it is set
// is not found at the first Python cell, as a failed cell (exit 1).
func CheckGatewayURL() error {
	v := os.Getenv("PI_PYTHON_GATEWAY_URL")
	if v == "" {
		return nil
	}
	if _, err := gateway.ParseURL(v); err != nil {
		return fmt.Errorf("PI_PYTHON_GATEWAY_URL=%q: want a Jupyter kernel gateway's http:// or https:// address, such as http://127.0.0.1:8888 (%v): set it so, or unset it",
			v, err)
	}
	return nil
}

// Resolved is the backend b chooses, BackendRunner or BackendGateway,
// with the environment's say where b leaves it; ErrBackend for an
// unknown name.
func (b Backend) Resolved() (string, error) {
	choice := b.Name
	if choice == "" {
		choice = os.Getenv("EVALHOST_BACKEND")
	}
	if choice == "" && os.Getenv("PI_PYTHON_GATEWAY_URL") != "" {
		choice = BackendGateway
	}
	switch choice {
	case "", BackendRunner:
		return BackendRunner, nil
	case BackendGateway:
		return BackendGateway, nil
	}
	return "", fmt.Errorf("%w %q: use %q or %q", ErrBackend, choice, BackendRunner, BackendGateway)
}

func backendStarters(home string, b Backend) (map[string]sessions.Starter, error) {
	choice, err := b.Resolved()
	if err != nil {
		return nil, err
	}
	url := os.Getenv("PI_PYTHON_GATEWAY_URL")
	starters := sessions.DefaultStarters(home)
	if choice == BackendGateway {
		if url == "" {
			if err := shared.RequireShared(!b.NoSharedGateway); err != nil {
				return nil, err
			}
		}
		starters[sessions.LangPython] = sessions.GatewayStarter(sessions.GatewayConfig{
			URL: url, Token: os.Getenv("PI_PYTHON_GATEWAY_TOKEN"), Home: home})
	}
	return starters, nil
}
