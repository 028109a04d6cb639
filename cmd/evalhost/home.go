package main

import "github.com/evalhost/evalhost/config"

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// evalhostHome forwards to config.Home for the commands that take the home
// without an error (serve, gateway). When the home is refused it returns ""
// and (*backendFlags).starters, which such commands call next, reports why.
func evalhostHome() string {
	home, _ := config.Home()
	return home
}
