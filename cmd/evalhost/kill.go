package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/serve"
)

// killMain ends one session of the background process: a running cell is
// interrupted (then killed after the grace window) and its state is gone.
func killMain(args []string, _ io.Reader, stdout, stderr io.Writer, _ *slog.Logger) int {
	fs := pflag.NewFlagSet("kill", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: evalhost kill NAME\n\nEnds the session NAME of the background process (see evalhost sessions).\n")
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "evalhost kill: give one session NAME (see evalhost sessions), got %d arguments\n", fs.NArg())
		return exitUsage
	}
	name := fs.Arg(0)
	if err := badSessionName(name); err != nil {
		fmt.Fprintf(stderr, "evalhost kill %s: %v (see evalhost sessions)\n", shownName(name), err)
		return exitUsage
	}
	var closed serve.Closed
	err := askDaemon(map[string]string{"op": "close", "id": "kill", "session": name}, serve.TypeClosed, &closed)
	if errors.Is(err, daemon.ErrNotRunning) || (err == nil && !closed.Existed) {
		fmt.Fprintf(stderr, "evalhost kill: no session %q (see evalhost sessions)\n", name)
		return exitFailed
	}
	if err != nil {
		return askFailed("kill", err, stderr)
	}
	fmt.Fprintf(stdout, "ended session %s\n", trustdir.Shown(name))
	return exitOK
}
