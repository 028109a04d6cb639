package main

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/evalhost/evalhost/sessions"
)

// parseEnvFlags reads --env's NAME=VALUE (set) and NAME (passed on from
// this environment, as docker run -e takes it: nothing when unset) into
// the variables the cells' interpreter gets beside the filtered
// environment (sessions.AllowEnv): an explicit choice of the user's, so a
// name the filter would drop passes too. A name the registry would refuse
// (sessions.CheckEnvName: "A B") is refused here, naming the flag.
func parseEnvFlags(list []string, getenv func(string) (string, bool)) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	env := map[string]string{}
	for _, kv := range list {
		name, value, set := strings.Cut(kv, "=")
		if name == "" {
			return nil, fmt.Errorf("--env %q: want NAME=VALUE, or NAME to pass this environment's value on", kv)
		}
		if err := sessions.CheckEnvName(name); err != nil {
			return nil, fmt.Errorf("--env %q: %w", kv, err) // "A B" is not an environment variable name: ...
		}
		if !set {
			if value, set = getenv(name); !set {
				continue
			}
		}
		env[name] = value
	}
	return env, nil
}

// withPythonUnbuffered passes run's own PYTHONUNBUFFERED on to the script,
// as python3 reads it (container images set it so a service's output is
// not held back): the cells' filtered environment drops it otherwise (a
// host's may hold it for its own python3), and the runner's streams write
// through when the interpreter's own do (runner/stdio.py). --env's value,
// when given, stands; an empty one is unset, as python3 reads it.
func withPythonUnbuffered(env map[string]string, getenv func(string) (string, bool)) map[string]string {
	const name = "PYTHONUNBUFFERED"
	if _, given := env[name]; given {
		return env
	}
	v, ok := getenv(name)
	if !ok || v == "" {
		return env
	}
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	env[name] = v
	return env
}

// lookupEnv is os.LookupEnv, which parseEnvFlags takes as a parameter for
// its tests.
func lookupEnv(name string) (string, bool) { return os.LookupEnv(name) }

// extraEnv is the terminal's size variables, then --env's over them.
func extraEnv(terminal, env map[string]string) map[string]string {
	if len(env) == 0 {
		return terminal
	}
	out := maps.Clone(terminal)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, env)
	return out
}

// exitsAt120 says whether the script's python3, its stdout unwritable,
// would end by its exit's failed flush (status 120) rather than by the
// OSError of a write (1): 3.14+ with a buffered stdout, whose buffer keeps
// what a failed write held (a long print does not even raise), so the
// exit's flush fails again. Only asked once a write failed: it resolves
// the interpreter and, for a binary (resolved unprobed), asks it.
func exitsAt120(f runFlags, home string) bool {
	if resolvedGateway(f.choice()) || f.py.unbuffered {
		return false
	}
	if v := f.env["PYTHONUNBUFFERED"]; v != "" && !f.py.ignoreEnvironment && !f.py.isolated {
		return false
	}
	py, err := sessions.ResolveInterpreter(f.python, f.cwd, home, os.Getenv, 0)
	if err != nil {
		return false
	}
	version, err := py.ProbedVersion(5 * time.Second)
	if err != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 3 || major == 3 && minor >= 14
}
