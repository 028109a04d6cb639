package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/gateway/shared"
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
// the gateway when PI_PYTHON_GATEWAY_URL is set, else the runner; PI_PY
// turns languages off (toolMode).
func (b *backendFlags) starters(home string) (map[string]sessions.Starter, error) {
	langs, err := toolMode()
	if err != nil {
		return nil, err
	}
	starters, err := b.backendStarters(home)
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

// toolMode reads PI_PY, the reference's tool-exposure override, and returns
// the cell languages that are on: 0/bash only sh, 1/py only Python,
// mix/both (or unset) both.
func toolMode() ([]string, error) {
	switch v := os.Getenv("PI_PY"); strings.ToLower(strings.TrimSpace(v)) {
	case "", "mix", "both":
		return []string{sessions.LangPython, sessions.LangShell}, nil
	case "0", "bash":
		return []string{sessions.LangShell}, nil
	case "1", "py":
		return []string{sessions.LangPython}, nil
	default:
		return nil, fmt.Errorf("PI_PY=%q: use 0 or bash (shell cells only), 1 or py (Python cells only), or mix or both", v)
	}
}

// disabledStarter fails every cell of a language PI_PY turned off.
func disabledStarter(lang string) sessions.Starter {
	return func(context.Context, sessions.Spec) (sessions.Executor, error) {
		name := map[string]string{sessions.LangPython: "Python", sessions.LangShell: "shell"}[lang]
		return nil, fmt.Errorf("%s cells are turned off by PI_PY=%s; unset PI_PY (or set it to mix) to run them", name, os.Getenv("PI_PY"))
	}
}

func (b *backendFlags) backendStarters(home string) (map[string]sessions.Starter, error) {
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
			if err := shared.RequireShared(b.shared); err != nil {
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
