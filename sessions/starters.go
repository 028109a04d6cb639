package sessions

import (
	"context"
	"path/filepath"

	"github.com/evalhost/evalhost/host"
	"github.com/evalhost/evalhost/internal/timeline"
	"github.com/evalhost/evalhost/runner"
	"github.com/evalhost/evalhost/shell"
)

// DefaultStarters runs Python cells in the evalhost runner and sh cells in a
// persistent bash, both local processes.
func DefaultStarters(home string) map[string]Starter {
	return map[string]Starter{
		LangPython: RunnerStarter(home),
		LangShell:  ShellStarter(),
	}
}

// RunnerStarter starts the embedded runner.py under the session's Python.
func RunnerStarter(home string) Starter {
	return func(ctx context.Context, spec Spec) (Executor, error) {
		cache := filepath.Join(home, "runner")
		if home == "" {
			cache = filepath.Join(defaultCacheDir(), "evalhost")
		}
		path, err := runner.Path(cache)
		if err != nil {
			return nil, err
		}
		var modules string
		if len(spec.Modules) > 0 {
			modules = runner.ModulesValue(spec.Modules)
		}
		env := setEnv(spec.Env, runner.ModulesEnv, modules)
		timeline.Mark("spawn", "python", spec.Python.Path)
		p, err := host.Start(ctx, host.Options{
			Python:        spec.Python.Path,
			Args:          spec.PythonArgs,
			Runner:        path,
			Env:           env,
			Dir:           spec.Cwd,
			StartTimeout:  spec.StartTimeout,
			Grace:         spec.Grace,
			Stdin:         spec.Stdin,
			StdinTerminal: spec.StdinTerminal,
			StdinWithheld: spec.StdinWithheld,
			Terminal:      spec.Terminal,
			MergeStderr:   spec.MergeStderr,
		})
		var readyExe string
		if err == nil {
			readyExe = p.Ready().Executable
			timeline.Mark("ready", "executable", readyExe, "version", p.Ready().Python)
		}
		spec.Python.VerifyStart(readyExe, err)
		if err != nil {
			return nil, err // not a typed nil Executor
		}
		return p, nil
	}
}

// ShellStarter starts bash under a pseudo-terminal.
func ShellStarter() Starter {
	return func(ctx context.Context, spec Spec) (Executor, error) {
		return shell.Start(ctx, shell.Options{
			Env:          spec.Env,
			Dir:          spec.Cwd,
			StartTimeout: spec.StartTimeout,
			Grace:        spec.Grace,
		})
	}
}
