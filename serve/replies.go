package serve

import (
	"encoding/json"

	"github.com/evalhost/evalhost/sessions"
)

// Reply types: the "type" of every line the server writes that is not a
// frame (frames keep the runner protocol's types).
const (
	TypeHello             = "hello"
	TypeCellEnd           = "cell_end"
	TypeEnd               = "end"
	TypeProgress          = "progress"
	TypeRequestError      = "request_error"
	TypeReset             = "reset"
	TypeClosed            = "closed"
	TypeSessions          = "sessions"
	TypePong              = "pong"
	TypeToolCall          = "tool_call"
	TypeToolCallAbandoned = "tool_call_abandoned"
	TypeJob               = "job"
	TypeJobs              = "jobs"
	TypeJobEnd            = "job_end"
)

// The replies below are the lines of docs/serve-protocol.md; Type holds the
// constant of the same name. Key order carries no meaning on the wire, but
// each keeps the order its line has always had: alphabetical for those that
// were once encoded from maps.

// Hello is the first line the server writes.
type Hello struct {
	Languages []string `json:"languages"` // cell languages that are on: py, sh
	PID       int      `json:"pid"`
	Protocol  string   `json:"protocol"` // Protocol
	Type      string   `json:"type"`
	Version   string   `json:"version"` // evalhost's
}

// CellEnd is a cell's result. ID is left out when empty (run --json).
type CellEnd struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	sessions.CellResult
}

// End is a request's last line: exactly one per accepted eval. ID is left
// out when empty (run --json).
type End struct {
	DurationMs float64         `json:"durationMs"`
	FailedCell int             `json:"failedCell"` // -1 when every cell is ok
	ID         string          `json:"id,omitempty"`
	Status     sessions.Status `json:"status"` // that of the first cell not ok, else ok
	Type       string          `json:"type"`
}

// Progress says a cell is still running, every Config.Progress.
type Progress struct {
	Cell      int    `json:"cell"`
	ElapsedMs int64  `json:"elapsedMs"`
	ID        string `json:"id"`
	Type      string `json:"type"`
}

// RequestError refuses a request line, or ends an accepted eval that
// failed before its end. Op names the refused request's op, so a refused
// cancel of "r1" is not mistaken for the end of eval "r1"; InFlight marks
// the refusal of an eval whose id is taken by one still in flight, whose
// end is still to come.
type RequestError struct {
	Error    string `json:"error"`              // what was wrong and what to do
	ID       string `json:"id,omitempty"`       // the request's id, when one could be read
	InFlight bool   `json:"inFlight,omitempty"` // a request with this id is queued or running still
	Line     string `json:"line,omitempty"`     // a prefix of a line that was not a JSON object
	Op       string `json:"op,omitempty"`       // the request's op, when one could be read
	Type     string `json:"type"`
}

// Reset answers a reset request.
type Reset struct {
	Existed bool   `json:"existed"` // false: no such session, nothing was restarted
	ID      string `json:"id"`
	OK      bool   `json:"ok"`
	Session string `json:"session"`
	Type    string `json:"type"`
}

// Closed answers a close request.
type Closed struct {
	Existed bool   `json:"existed"`
	ID      string `json:"id"`
	Session string `json:"session"`
	Type    string `json:"type"`
}

// Sessions answers a sessions request.
type Sessions struct {
	ID       string          `json:"id"`
	Sessions []sessions.Info `json:"sessions"`
	Type     string          `json:"type"`
}

// Pong answers a ping.
type Pong struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// ToolCall asks the client to run a tool for a cell; a tool_result with
// the same Call answers it.
type ToolCall struct {
	Type    string          `json:"type"`
	Call    string          `json:"call"`
	ID      string          `json:"id"`   // the running request's
	Cell    int             `json:"cell"` // the running cell's index
	Session string          `json:"session"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args"` // a JSON object
}

// ToolCallAbandoned says the cell that made a call ended before it was
// answered; a tool_result for it afterwards is refused.
type ToolCallAbandoned struct {
	Call string `json:"call"`
	Type string `json:"type"`
}

// Job answers job, wait and stop: a job's status, with a page of its
// output for job (see sessions.JobInfo).
type Job struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	sessions.JobInfo
}

// Jobs answers jobs: the running jobs and the recently ended ones.
type Jobs struct {
	ID   string             `json:"id,omitempty"`
	Jobs []sessions.JobInfo `json:"jobs"`
	Type string             `json:"type"`
}

// JobEnd says a job ended, with its final status and result: one per job,
// after the end of the request its cell detached from.
type JobEnd struct {
	Type string `json:"type"`
	sessions.JobInfo
}
