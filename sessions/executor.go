package sessions

import (
	"context"
	"os"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/runner"
)

// Executor is one live interpreter of a session: the runner process, the sh
// shell or a gateway kernel, all keeping the contract of package backend.
type Executor = backend.Executor

// streamLender is implemented by executors that can lend a cell's stdout
// and stderr bytes to a callback in place of frames (host.Process).
type streamLender interface {
	ExecuteStreams(ctx context.Context, req frames.Request, emit func(frames.Frame), streams func(frames.Type, []byte)) (frames.Frame, error)
}

// lastCellTeller is implemented by executors that can be told the next
// cell is their last, so they leave as soon as it ends (host.Process).
type lastCellTeller interface {
	ExitAfterNextCell()
}

// rssReporter is implemented by executors whose memory the guard can read.
type rssReporter interface {
	RSS() (int64, error)
}

// Spec is what a Starter needs to start one executor.
type Spec struct {
	Language      string
	Session       string
	Python        Interpreter // resolved; unused by sh
	Cwd           string
	Env           []string        // complete, filtered child environment
	Modules       []runner.Module // extension modules to run at start, in order, as runner.FindModules judged them
	StartTimeout  time.Duration
	Grace         time.Duration
	Stdin         *os.File // Config.Stdin, for a Python interpreter
	StdinTerminal bool     // Config.StdinTerminal, for a Python interpreter
	StdinWithheld string   // Config.StdinWithheld, for a Python interpreter
	Terminal      []int    // Config.Terminal, for a Python interpreter
	PythonArgs    []string // Config.PythonArgs, for a Python interpreter
	MergeStderr   bool     // Config.MergeStderr, for a Python interpreter
}

// RunInfo names one execution of a cell: the run id the interpreter sees
// (EVALHOST_RUN) and the request and cell it belongs to.
type RunInfo struct {
	Session string
	Run     string
	Request string
	Cell    int
}

// Starter starts an executor for one language.
type Starter func(ctx context.Context, spec Spec) (Executor, error)
