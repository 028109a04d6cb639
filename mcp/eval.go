package mcp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/sessions"
)

// EvalInput is the eval tool's arguments.
type EvalInput struct {
	Cells   []EvalCell `json:"cells"`
	Session string     `json:"session,omitempty"`
	Cwd     string     `json:"cwd,omitempty"`
	Mode    string     `json:"mode,omitempty"`
}

// EvalCell is one cell of an eval call.
type EvalCell struct {
	Code     string  `json:"code"`
	Language *string `json:"language,omitempty"` // nil is py; "" is refused, as serve refuses it
	Title    string  `json:"title,omitempty"`
	Reset    bool    `json:"reset,omitempty"`
	Timeout  float64 `json:"timeout,omitempty"` // seconds
	// OnTimeout "detach" keeps the cell running as a job past its timeout.
	OnTimeout  string  `json:"onTimeout,omitempty"`
	MaxRuntime float64 `json:"maxRuntime,omitempty"` // seconds, for a detached cell
}

// EvalOutput is the eval tool's structuredContent.
type EvalOutput struct {
	Status     sessions.Status `json:"status" jsonschema:"ok, or the status of the first cell that was not ok"`
	FailedCell int             `json:"failedCell" jsonschema:"index of the first cell that was not ok; -1 when all were"`
	Cells      []CellOutput    `json:"cells"`
}

// CellOutput is one cell's summary in EvalOutput.
type CellOutput struct {
	Cell           int             `json:"cell" jsonschema:"0-based index in the call"`
	Title          string          `json:"title,omitempty"`
	Language       string          `json:"language"`
	Status         sessions.Status `json:"status" jsonschema:"ok, error, timeout, cancelled, killed, skipped or detached"`
	ExecutionCount int             `json:"executionCount" jsonschema:"the interpreter's execution counter after the cell"`
	DurationMs     float64         `json:"durationMs"`
	StateLost      bool            `json:"stateLost" jsonschema:"the interpreter was restarted (reset, death, kill): earlier variables are gone"`
	Retried        bool            `json:"retried" jsonschema:"the interpreter died during the cell and the cell ran again in a fresh one"`
	Truncated      bool            `json:"truncated" jsonschema:"the text shown is the tail of the output; artifact has all of it"`
	Artifact       string          `json:"artifact,omitempty" jsonschema:"artifact:// URI of the full output, readable with resources/read"`
	Message        string          `json:"message,omitempty" jsonschema:"why the cell failed, when its output does not say"`
	Images         []ImageOutput   `json:"images,omitempty"`
	Job            string          `json:"job,omitempty" jsonschema:"the job a detached cell runs on as (see the job, wait and stop tools)"`
	JobOffset      int64           `json:"jobOffset,omitempty" jsonschema:"the job tool's offset for the output after what this result shows"`
}

const evalDescription = `Run Python and shell cells in a persistent session (like Jupyter: state lasts between calls with the same session and cwd).

Each cell's result starts with a status line:
- ok: ran to the end.
- error: raised an exception or exited non-zero; the traceback is in the output.
- timeout: ran past its timeout; it was interrupted (killed if it did not stop), output so far is kept.
- cancelled: the call was cancelled; the cell was interrupted, state is kept unless it had to be killed.
- killed: the interpreter died (e.g. out of memory) or was killed; state is lost. A cell whose interpreter dies is retried once in a fresh interpreter ("retried").
- skipped: not run because an earlier cell of the call was not ok.
- detached: the cell set onTimeout "detach" and was still running at its timeout; it runs on as a job (read its new output with the job tool, wait for it with wait, stop it with stop). Its session is busy until the job ends; use another session meanwhile.
"state lost" means variables from before are gone.

Output is bounded: you see its last part; when more was produced the text says so and gives an artifact:// URI with all of it (read it with resources/read). PNG/JPEG plots and images come back as images, downscaled to at most ~1568 px and a byte budget, with a resource link to the full-size file.`

func (s *Server) addEvalTool() {
	addTool(s, &sdk.Tool{
		Name:        "eval",
		Title:       "Run code cells",
		Description: evalDescription + s.toolsNote(),
		InputSchema: evalSchema(),
		Annotations: &sdk.ToolAnnotations{Title: "Run code cells", OpenWorldHint: ptr(true), DestructiveHint: ptr(true)},
	}, s.eval)
}

func ptr[T any](v T) *T { return &v }

// toolsNote tells the model which host tools its Python code may call.
func (s *Server) toolsNote() string {
	if len(s.cfg.ToolNames) == 0 {
		return ""
	}
	calls := make([]string, len(s.cfg.ToolNames))
	for i, n := range s.cfg.ToolNames {
		calls[i] = "tool." + n + "(**args)"
	}
	return "\n\nPython code in a cell can call these host tools; each returns the tool's value or raises ToolError: " +
		strings.Join(calls, ", ") + "."
}

func (s *Server) eval(ctx context.Context, req *sdk.CallToolRequest, in EvalInput) (*sdk.CallToolResult, EvalOutput, error) {
	r, err := buildRequest(in)
	if err != nil {
		return nil, EvalOutput{}, err
	}
	col := newCollector(s.cfg.Store, len(r.Cells))
	r.OnCellEnd = col.cellEnd
	stop := s.startProgress(ctx, req, col.start, col.changed, col.note)
	res, err := s.cfg.Registry.Eval(ctx, r, col.emit)
	stop()
	if err != nil {
		return nil, EvalOutput{}, fmt.Errorf("eval: %w", err)
	}
	return s.renderEval(res, col)
}

// buildRequest checks what the schema cannot (language names, blank code
// is allowed) and turns the arguments into a sessions request.
func buildRequest(in EvalInput) (sessions.Request, error) {
	r := sessions.Request{Session: in.Session, Cwd: in.Cwd, Mode: in.Mode}
	if len(in.Cells) == 0 {
		return r, fmt.Errorf(`"cells" must hold at least one {"code": ...} object`)
	}
	if strings.ContainsRune(in.Session, 0) {
		// It goes into the interpreter's environment, where a NUL cannot.
		return r, fmt.Errorf(`"session" must not contain a NUL character`)
	}
	switch in.Mode {
	case "", sessions.ModeSession, sessions.ModePerCall:
	default:
		return r, fmt.Errorf(`"mode" is %q; use "session" or "per-call"`, in.Mode)
	}
	for i, c := range in.Cells {
		lang := sessions.LangPython
		if c.Language != nil {
			l, ok := sessions.ParseLanguage(*c.Language)
			if !ok {
				return r, fmt.Errorf("cells[%d].language is %q; use %s, in any case", i, *c.Language, sessions.LanguageChoices())
			}
			lang = l
		}
		if c.Timeout < 0 || math.IsNaN(c.Timeout) {
			return r, fmt.Errorf("cells[%d].timeout must be a positive number of seconds (at most 600)", i)
		}
		if c.MaxRuntime < 0 || math.IsNaN(c.MaxRuntime) || c.MaxRuntime > sessions.MaxMaxRuntime.Seconds() {
			return r, fmt.Errorf("cells[%d].maxRuntime must be a positive number of seconds (at most 86400)", i)
		}
		r.Cells = append(r.Cells, sessions.Cell{Language: lang, Code: c.Code, Title: c.Title, Reset: c.Reset,
			Timeout:   seconds(min(c.Timeout, 600)),
			OnTimeout: c.OnTimeout, MaxRuntime: seconds(c.MaxRuntime)})
	}
	return r, nil
}

// seconds converts an argument in seconds to a Duration; a positive one
// is at least 1ns, since one that rounds to 0 would read as "not given"
// and take the default (30 s, a job's 1 h) instead of the short bound asked.
func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return max(time.Duration(s*float64(time.Second)), time.Nanosecond)
}
