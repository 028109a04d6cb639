// Command evalhost runs code cells in persistent interpreter sessions for AI
// agents (`evalhost serve`) and for shell pipelines (`evalhost run`).
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"

	// For its init: a one-shot run's reaper starts while evalhost initialises.
	_ "github.com/evalhost/evalhost/cmd/evalhost/internal/prestart"
	"github.com/evalhost/evalhost/internal/timeline"
)

// Exit codes of every subcommand.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	// exitFlushFailed is python3's when its exit cannot flush sys.stdout.
	exitFlushFailed = 120
	exitTimeout     = 124
	exitInterrupted = 130
	// exitOutputClosed is what a shell reports for a command SIGPIPE
	// killed (128+13): run's output was closed, e.g. by `| head -1`.
	exitOutputClosed = 141
)

const usage = `evalhost runs code cells in persistent Python and shell sessions.

Usage:
  evalhost run [FLAGS] FILE|- [ARG...]     run a script's cells (split on "# %%" lines)
  evalhost run [FLAGS] -c CODE [ARG...]    run cells given as -c (repeatable)
  evalhost run [FLAGS] -m MODULE [ARG...]  run a module, as python3 -m
  evalhost serve                           NDJSON API for agents on stdin/stdout
  evalhost mcp                             Model Context Protocol server (stdio, or --http)
  evalhost nb COMMAND ...                  view, edit and run .ipynb notebooks
  evalhost gateway status|stop             the local shared Jupyter kernel gateway
  evalhost sessions | kill NAME            sessions kept by run --session
  evalhost jobs [JOB]                      cells of run --session --detach past their timeout
  evalhost daemon stop|status              their background process
  evalhost doctor                          check the interpreter and what is missing
  evalhost version                         print the version

Run "evalhost COMMAND --help" for a command's flags.
`

func main() {
	exitAs(dispatch(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if longLived(args) { // before the logger, which writes stderr
		w, restore := socketStderr(stderr)
		defer restore()
		stderr = w
	}
	debug, err := envSwitch("EVALHOST_DEBUG", "debug logging and a timeline of the command's phases on stderr")
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", commandName(args), err)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel(debug)}))
	if debug {
		timeline.Enable(stderr)
		timeline.Mark("command", "args", strings.Join(args, " "))
	}
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
		if cmd == "help" && len(rest) > 0 {
			// help COMMAND, as git's and go's: that command's help.
			return dispatch([]string{rest[0], "--help"}, stdin, stdout, stderr)
		}
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

// parseFlags parses a subcommand's flags; ok is false when the command must
// return code at once (after --help, or a bad flag). pflag says nothing under
// ContinueOnError, so the error and where to read about the flags are
// printed here.
func parseFlags(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	return parseFlagsHinted(fs, args, stdout, stderr, "")
}

// parseFlagsHinted is parseFlags with unknownHint printed after the refusal
// of a flag fs does not know (when not "").
func parseFlagsHinted(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer, unknownHint string) (code int, ok bool) {
	fs.SetOutput(stdout) // only --help writes there (fs.Usage): asked for, it is the output, as git's and go's
	plainNumbers(fs)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, pflag.ErrHelp):
		return exitOK, false
	}
	fmt.Fprintf(stderr, "evalhost %s: %v\n", fs.Name(), err)
	if unknownHint != "" && strings.HasPrefix(err.Error(), "unknown") {
		fmt.Fprintln(stderr, unknownHint)
	}
	fmt.Fprintf(stderr, "Run \"evalhost %s --help\" for its flags.\n", fs.Name())
	return exitUsage, false
}

// refuseNegative is a usage error naming the first of fs's flags names
// given a negative size, count or duration, which no such flag means: they
// were taken silently (--grace -1s, --max-output -5), unlike --timeout -1.
func refuseNegative(fs *pflag.FlagSet, names ...string) error {
	for _, name := range names {
		fl := fs.Lookup(name)
		if fl != nil && fl.Changed && strings.HasPrefix(fl.Value.String(), "-") {
			return fmt.Errorf("--%s %s: want 0 or more", name, fl.Value.String())
		}
	}
	return nil
}

// logLevel is the logger's level: debug's (EVALHOST_DEBUG), else info's
// under PI_PYTHON_IPC_TRACE (its frame lines), else warnings.
func logLevel(debug bool) slog.Level {
	switch {
	case debug:
		return slog.LevelDebug
	case ipcTraceOn():
		return slog.LevelInfo
	}
	return slog.LevelWarn
}
