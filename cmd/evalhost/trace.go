package main

import (
	"log/slog"
	"os"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// ipcTraceOn is the reference's PI_PYTHON_IPC_TRACE=1: log every frame the
// interpreters send, as it logs kernel IPC.
func ipcTraceOn() bool { return os.Getenv("PI_PYTHON_IPC_TRACE") == "1" }

// maxTracedFrame bounds one traced frame; bulk output would flood the log.
const maxTracedFrame = 400

// ipcTrace wraps emit to log each frame (at info level, which the trace
// turns on) before passing it on.
func ipcTrace(logger *slog.Logger, emit sessions.Emit) sessions.Emit {
	if !ipcTraceOn() {
		return emit
	}
	return func(cell int, f frames.Frame) {
		line := frames.AppendJSON(nil, &f)
		if len(line) > maxTracedFrame {
			line = append(line[:maxTracedFrame:maxTracedFrame], "…"...)
		}
		logger.Info("ipc recv", "cell", cell, "frame", string(line))
		emit(cell, f)
	}
}
