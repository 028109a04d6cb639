package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/serve"
)

// sessionNameNotUTF8 refuses a session name that is not UTF-8: the
// background process's JSON would make each bad byte U+FFFD, so that
// names differing only there would be one session.
const sessionNameNotUTF8 = "a session's name is not UTF-8; the background process would not keep it apart from others (its bad bytes become U+FFFD): use a UTF-8 name"

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
	if name == "" {
		fmt.Fprintf(stderr, "evalhost kill \"\": %s (see evalhost sessions)\n", emptySessionName)
		return exitUsage
	}
	if !utf8.ValidString(name) {
		fmt.Fprintf(stderr, "evalhost kill %s: %s\n", trustdir.Shown(name), sessionNameNotUTF8)
		return exitUsage
	}
	var closed serve.Closed
	err := askDaemon(map[string]string{"op": "close", "id": "kill", "session": name}, serve.TypeClosed, &closed)
	if errors.Is(err, daemon.ErrNotRunning) || (err == nil && !closed.Existed) {
		fmt.Fprintf(stderr, "evalhost kill: no session %q (see evalhost sessions)\n", name)
		return exitFailed
	}
	if err != nil {
		fmt.Fprintf(stderr, "evalhost kill: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "ended session %s\n", trustdir.Shown(name))
	return exitOK
}
