// Command evalhost runs code cells in persistent interpreter sessions for AI
// agents (`evalhost serve`) and for shell pipelines (`evalhost run`).
package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
)

// Exit codes of every subcommand.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitTimeout     = 124
	exitInterrupted = 130
)

const usage = `evalhost runs code cells in persistent Python and shell sessions.

Usage:
  evalhost run [FILE|-] [-c CODE]...   run cells (split on "# %%" lines)
  evalhost serve                       NDJSON API for agents on stdin/stdout
  evalhost nb COMMAND ...              view, edit and run .ipynb notebooks
  evalhost gateway status|stop         the local shared Jupyter kernel gateway
  evalhost doctor                      check the interpreter and what is missing
  evalhost version                     print the version

Run "evalhost COMMAND --help" for a command's flags.
`

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel()}))
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runMain(rest, stdin, stdout, stderr, logger)
	case "nb":
		return nbRun(rest, stdin, stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "evalhost %s\n", version)
		return exitOK
	case "doctor":
		return doctorMain(rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		if extra, ok := extraCommands[cmd]; ok {
			return extra(rest, stdin, stdout, stderr, logger)
		}
		fmt.Fprintf(stderr, "evalhost: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

// extraCommands are registered by the files that implement them (serve,
// gateway), so each command lives in its own file.
var extraCommands = map[string]func(args []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger) int{}

func logLevel() slog.Level {
	if os.Getenv("EVALHOST_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}
