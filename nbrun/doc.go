// Package nbrun executes Jupyter notebooks through evalhost sessions and
// records their outputs into them as nbclient does.
//
// Contract:
//   - [Run] executes the selected code cells of a [notebook.Notebook] in
//     order in one fresh per-call session of a [sessions.Registry] and
//     writes outputs, execution counts and metadata.language_info into it.
//     Markdown and raw cells are untouched; unselected code cells, and
//     selected ones that never started, keep their outputs (with
//     Options.Papermill, their metadata.papermill says pending). A failed
//     cell stops the run unless AllowErrors, or unless it raised and is
//     tagged raises-exception, as nbclient runs it (its error is recorded,
//     the run is ok and its papermill status completed); a cell tagged
//     skip-execution is not run, as a blank one is not. A cell
//     stopped from outside (timeout, cancel, dead interpreter) keeps its
//     partial output and one error output: the interpreter's own when it
//     raised one (the KeyboardInterrupt of an interrupt, as Jupyter and
//     papermill record it), else one naming why (CellTimeoutError,
//     CellCancelledError, DeadKernelError). An interpreter that
//     dies ends the run, AllowErrors or not: its cell is not retried and no
//     later cell runs on a fresh interpreter; a cell's sys.exit() ends it
//     too, ok (sessions.Request.Batch). Cancelling the context interrupts
//     the running cell. Options.OnCellEnd sees the
//     notebook after every cell, so a caller can save progress, and
//     Options.OnCellStart as each cell starts (its started frame: its
//     outputs cleared, its papermill status running), as papermill saves;
//     Options.OnIdle when a cell has ended and none has started
//     Options.IdleAfter later (never after Run returns), so a caller that
//     saves at starts can leave an end to the next start's save;
//     Options.OnFrame sees each frame as it is recorded (a log of outputs).
//     Options.Timeout = sessions.NoTimeout lets cells run unbounded. Text
//     is recorded as the registry's sink hands it back: a sink with
//     streamsink.Options.Verbatim keeps it as the cell wrote it (ANSI
//     colours, "\r\n"), as Jupyter does; nb run's does. A cell that
//     starts loses an earlier Jupyter run's metadata.execution timestamps,
//     which nbclient replaces and the runner has no kernel messages for.
//   - With Options.Papermill, Run writes papermill's execution metadata as
//     papermill 2 does ([Papermill]): metadata.papermill of the notebook
//     (paths, parameters, times, exception, version: the runner's own)
//     and of each cell (times, status pending, running, completed or
//     failed, exception), as the run goes, so a progress save in
//     OnCellStart or OnCellEnd holds it; a cell left out of Options.Cells
//     is pending, its earlier run's status and times gone; a whole-notebook
//     run records the markdown, raw and blank cells it passes completed, as
//     papermill does.
//   - [Recorder] turns [frames.Frame] values into nbformat outputs: streams
//     merged per name, display_data, execute_result, error; clear_output
//     (also wait=True); a display id names every output shown under it,
//     execute_result included, in any recorded cell, and update_display (or
//     a new display under the same id) replaces their data and metadata.
//     An empty text/plain beside other types (the protocol's stand-in for
//     a bundle that had none: a raw display, a kernel's output) is not
//     written, as Jupyter writes none. A bundle or metadata that is not
//     valid JSON is an error and nothing of that frame is recorded.
//   - [SelectCodeCells] picks cells by "2,5-7" specs, skipping blank code
//     cells as nbclient does and the markdown and raw cells a range spans
//     (a markdown cell named alone is refused); a bad spec is a [*CellSpecError]
//     ([ErrCellSpec]). [CheckLanguage] refuses a notebook of another kernel
//     language with a [*LanguageError] ([ErrLanguage]).
//
// Calling Run with a nil registry is [ErrNoRegistry]. A notebook must not
// be used by anything else while Run records into it.
package nbrun
