package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// NotebookRunRequest asks to execute a notebook's code cells and write
// their outputs back into the file.
type NotebookRunRequest struct {
	Path        string        // absolute
	Cells       []int         // code cells by 0-based index; nil means every non-blank code cell
	Timeout     time.Duration // per cell; 0 means the default
	AllowErrors bool          // keep running after a failed cell
}

// NotebookRunResult is what a run did. Cells[i] is the notebook index of
// Result.Cells[i].
type NotebookRunResult struct {
	Result sessions.Result
	Cells  []int
	Output string // the file the outputs were written to; "" when none was
	// NotSaved says why the notebook itself does not hold the outputs (it
	// changed on disk while the cells ran, or could not be written); nil
	// when it does. Output then names where they went instead, if anywhere.
	NotSaved error
}

// NotebookRunner executes a notebook in place. It returns an error for a
// notebook it cannot run (missing, invalid, not Python, a bad selection,
// one it could not write back); a cell's failure is in the Result, and a
// save that failed once the cells ran is in NotSaved, so that the result
// still says what ran.
type NotebookRunner func(ctx context.Context, req NotebookRunRequest) (NotebookRunResult, error)

// NotebookRunInput is notebook_run's arguments.
type NotebookRunInput struct {
	Path        string  `json:"path"`
	Cells       []int   `json:"cells,omitempty"`
	Timeout     float64 `json:"timeout,omitempty"`
	AllowErrors bool    `json:"allowErrors,omitempty"`
}

// NotebookRunOutput is notebook_run's structuredContent.
type NotebookRunOutput struct {
	Path       string          `json:"path"`
	Written    string          `json:"written" jsonschema:"the file the outputs were written to: path, or another file when the notebook could not be written (see notSaved); empty when none was"`
	NotSaved   string          `json:"notSaved,omitempty" jsonschema:"why the notebook does not hold the outputs (it changed on disk while the cells ran, or could not be written); absent when it does"`
	Status     sessions.Status `json:"status"`
	FailedCell int             `json:"failedCell" jsonschema:"notebook index of the first cell that was not ok; -1 when all were"`
	Cells      []CellOutput    `json:"cells" jsonschema:"one per executed cell; cell is the notebook index"`
}

func (s *Server) addNotebookRunTool() {
	addTool(s, &sdk.Tool{
		Name:  "notebook_run",
		Title: "Run a notebook's code cells",
		Description: "Execute a .ipynb notebook's code cells in order in a fresh Python session (cwd: the notebook's " +
			"directory) and write their outputs and execution counts into the file, as nbclient does. Markdown and " +
			"raw cells are untouched; unselected cells keep their outputs. A cell that is not ok stops the run " +
			"unless allowErrors; the file still gets every output produced so far. A notebook changed on disk while " +
			"the cells ran is left as it is and the outputs go to FILE.nbconvert.ipynb (written and notSaved say so). " +
			"The result lists each executed cell's status (see eval) and the tail of its output.",
		InputSchema: object([]string{"path"}, map[string]*jsonschema.Schema{
			"path":        bounded(maxIDChars, str(nbPathDesc)),
			"cells":       array("Only these code cells, by 0-based index (default: all).", integer("cell index", 0), 1),
			"timeout":     number("Seconds per cell (default 30, at most 600).", 0, 600),
			"allowErrors": boolean("Keep running after a cell fails (its error is in its outputs)."),
		}),
		Annotations: &sdk.ToolAnnotations{Title: "Run a notebook's code cells", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.nbRun)
}

// maxRunOutputBytes bounds the cell outputs one notebook_run result shows
// (the failed cell's is always shown): the result is one message, and each
// cell's tail is up to 50 KB, so a few hundred chatty cells passed the
// 16 MiB at which clients drop the connection. The notebook has them all.
const maxRunOutputBytes = 1 << 20

func (s *Server) nbRun(ctx context.Context, req *sdk.CallToolRequest, in NotebookRunInput) (*sdk.CallToolResult, NotebookRunOutput, error) {
	if s.cfg.RunNotebook == nil {
		return nil, NotebookRunOutput{}, errors.New("notebook execution is not available in this server")
	}
	path, err := s.nbPath(in.Path)
	if err != nil {
		return nil, NotebookRunOutput{}, err
	}
	stop := s.keepAlive(ctx, req, "running")
	run, err := s.cfg.RunNotebook(ctx, NotebookRunRequest{Path: path, Cells: in.Cells,
		Timeout: seconds(min(in.Timeout, 600)), AllowErrors: in.AllowErrors})
	stop()
	if err != nil {
		return nil, NotebookRunOutput{}, s.nbFileError(err, in.Path, false)
	}
	res := run.Result
	out := NotebookRunOutput{Path: path, Written: run.Output, Status: res.Status, FailedCell: -1, Cells: []CellOutput{}}
	if run.NotSaved != nil {
		out.NotSaved = run.NotSaved.Error()
	}
	var b strings.Builder
	budget := maxRunOutputBytes
	fmt.Fprintf(&b, "ran %d code cells of %s (%s); %s\n", len(res.Cells), path, res.Status, savedWhere(run))
	for i, c := range res.Cells {
		nbIndex := run.Cells[i]
		if i == res.FailedCell {
			out.FailedCell = nbIndex
		}
		co := CellOutput{Cell: nbIndex, Language: c.Language, Status: c.Status, ExecutionCount: c.ExecutionCount,
			DurationMs: c.DurationMs, StateLost: c.StateLost, Retried: c.Retried, Truncated: c.Output.Truncated, Message: c.Message}
		if c.Output.ArtifactID != "" {
			co.Artifact = streamsink.Scheme + c.Output.ArtifactID
		}
		out.Cells = append(out.Cells, co)
		c.Title = fmt.Sprintf("notebook cell %d", nbIndex)
		b.WriteString(statusLine(c, len(res.Cells), res.FailedCell))
		if body := strings.TrimRight(c.Output.String(), "\n"); body != "" {
			if len(body) <= budget || i == res.FailedCell {
				b.WriteString("\n" + body)
				budget -= len(body)
			} else {
				b.WriteString("\n[output not shown: this result already shows 1 MiB of output; it is in the notebook]")
			}
		}
		b.WriteString("\n")
	}
	r := text(strings.TrimRight(b.String(), "\n"))
	r.IsError = res.Status != sessions.StatusOK || run.NotSaved != nil
	return r, out, nil
}

// savedWhere says where a run's outputs were written.
func savedWhere(run NotebookRunResult) string {
	switch {
	case run.NotSaved == nil:
		return "wrote " + run.Output
	case run.Output != "":
		return fmt.Sprintf("the notebook was NOT updated: %v; the outputs were written to %s instead", run.NotSaved, run.Output)
	}
	return fmt.Sprintf("the outputs were NOT saved: %v; the statuses and output tails below are what is left of them", run.NotSaved)
}
