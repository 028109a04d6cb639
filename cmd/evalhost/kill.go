package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/serve"
)

const killUsage = `Usage: evalhost kill [--cwd DIR | --all] NAME

Ends the session NAME of the current directory in the background process: a
session is a NAME in a directory, as "evalhost run --session NAME" keys it and
"evalhost sessions" lists it (NAME, CWD). A running cell or job is interrupted
(then killed after the grace window) and its state is gone. A directory
is named by its own path, links resolved, as run --session keys it. A
directory removed since can still be named with --cwd.

Flags:
%s`

// killMain ends one session of the background process: NAME in the
// current directory (or --cwd DIR), or in every directory with --all.
func killMain(args []string, _ io.Reader, stdout, stderr io.Writer, _ *slog.Logger) int {
	fs := pflag.NewFlagSet("kill", pflag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintf(fs.Output(), killUsage, fs.FlagUsages()) }
	cwdFlag := fs.String("cwd", "", "end the session NAME of DIR instead of the current directory's")
	all := fs.Bool("all", false, "end the sessions NAME of every directory")
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
	if *all && *cwdFlag != "" {
		fmt.Fprintf(stderr, "evalhost kill: --cwd and --all exclude each other\n")
		return exitUsage
	}
	req := map[string]any{"op": "close", "id": "kill", "session": name}
	var cwd string
	if !*all {
		var err error
		if cwd, err = absDir(*cwdFlag); err != nil { // "" is the current directory
			fmt.Fprintf(stderr, "evalhost kill: %v; give its path with --cwd DIR (a removed directory's session is ended so), or --all\n", err)
			return exitUsage
		}
		cwd = sessionDir(cwd) // as run --session keys it
		req["cwd"] = fsJSON(cwd)
	}
	var closed serve.Closed
	err := askDaemon(req, serve.TypeClosed, &closed)
	if errors.Is(err, daemon.ErrNotRunning) || (err == nil && !closed.Existed) {
		fmt.Fprintf(stderr, "evalhost kill: no session %q%s (see evalhost sessions)\n", name, elsewhere(name, cwd))
		return exitFailed
	}
	if err != nil {
		return askFailed("kill", err, stderr)
	}
	if *all {
		fmt.Fprintf(stdout, "ended session %s in every directory\n", trustdir.Shown(name))
	} else {
		fmt.Fprintf(stdout, "ended session %s\n", trustdir.Shown(name))
	}
	return exitOK
}

// elsewhere says, for a kill that found no session name in cwd, where
// that name is open (the directories evalhost sessions lists for it) and
// how to end it there; "" under --all (cwd "") or when it is nowhere.
func elsewhere(name, cwd string) string {
	if cwd == "" {
		return ""
	}
	in := " in " + trustdir.Shown(cwd)
	var list serve.Sessions
	if askDaemon(map[string]string{"op": "sessions", "id": "ls"}, serve.TypeSessions, &list) != nil {
		return in
	}
	var dirs []string
	for _, s := range list.Sessions {
		if s.Session == name && !slices.Contains(dirs, s.Cwd) {
			dirs = append(dirs, s.Cwd)
		}
	}
	if len(dirs) == 0 {
		return in
	}
	return fmt.Sprintf("%s; it is open in %s: evalhost kill --cwd DIR %s ends one, --all every one",
		in, trustdir.ShownLines(dirs, ", "), shownName(name))
}
