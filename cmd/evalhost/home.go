package main

import "github.com/evalhost/evalhost/config"

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// evalhostHome is config.Home: evalhost's home, created 0700, or an error
// saying why it is refused (not the user's, writable by others, no home).
func evalhostHome() (string, error) { return config.Home() }
