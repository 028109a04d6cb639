package main

import (
	"os"
	"path/filepath"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// evalhostHome is where evalhost keeps its runner cache, modules, managed
// venv, artifacts and gateway files: EVALHOST_HOME, else ~/.evalhost.
func evalhostHome() string {
	if h := os.Getenv("EVALHOST_HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".evalhost")
	}
	return filepath.Join(os.TempDir(), "evalhost")
}
