package config

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/evalhost/evalhost/sessions"
)

// Languages reads PI_PY, the reference runtime's tool-exposure override,
// and returns the cell languages that are on: 0/bash only sh, 1/py only
// Python, mix/both (or unset) both. Any other value is an error saying the
// accepted ones.
func Languages() ([]string, error) {
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
