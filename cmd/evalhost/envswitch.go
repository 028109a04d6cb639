package main

import (
	"fmt"
	"os"
	"strings"
)

// envSwitch reads the switch name (an on/off environment variable) through
// parseSwitch; what says what it turns on, for the refusal.
func envSwitch(name, what string) (bool, error) {
	return parseSwitch(name, what, os.Getenv(name))
}

// parseSwitch is the one reading of every on/off variable: 1, true, yes and
// on (any case) are on; 0, false, no, off and empty (or unset) are off.
// Anything else is an error that says what it takes, not a guess: any
// value but empty was on, EVALHOST_DEBUG=0 included.
func parseSwitch(name, what, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "0", "false", "no", "off":
		return false, nil
	case "1", "true", "yes", "on":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q: want 1, true, yes or on (%s), or 0, false, no, off or empty (off): set it so, or unset it",
		name, v, what)
}

// commandName is how a refusal names the command args run: "evalhost run",
// "evalhost nb run", "evalhost daemon serve".
func commandName(args []string) string {
	name := "evalhost"
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return name
	}
	name += " " + args[0]
	switch args[0] {
	case "nb", "daemon", "gateway":
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			name += " " + args[1]
		}
	}
	return name
}
