package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/spf13/pflag"
)

// profileEnv names the CPU profile file when --cpuprofile is not given, for
// a command started by something else (an agent's harness, make bench).
const profileEnv = "EVALHOST_CPUPROFILE"

// cpuProfile is --cpuprofile: a CPU profile of the whole command, written
// when it returns (read it with `go tool pprof evalhost FILE`).
type cpuProfile struct{ path string }

func (c *cpuProfile) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.path, "cpuprofile", "", "write a CPU profile of this command to FILE when it ends (also "+profileEnv+"); read it with go tool pprof")
}

// start begins profiling when asked; the returned stop writes the profile.
// ok is false when the file cannot be written (the error is printed).
func (c *cpuProfile) start(cmd string, stderr io.Writer) (stop func(), ok bool) {
	path := c.path
	if path == "" {
		path = os.Getenv(profileEnv)
	}
	if path == "" {
		return func() {}, true
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "evalhost %s: cpu profile: %v; give a writable file to --cpuprofile or %s\n", cmd, err, profileEnv)
		return nil, false
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "evalhost %s: cpu profile: %v\n", cmd, err)
		return nil, false
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "evalhost %s: cpu profile %s: %v\n", cmd, path, err)
		}
	}, true
}
