package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/sessions"
)

// Jobs are cells that ran past their timeout with onTimeout "detach"
// (package sessions). job reads one's status and new output, wait waits for
// it (bounded, so a call never outlives a client's request timeout), stop
// stops it, jobs lists them.

// JobInput names a job, and for the job tool where its output is read from.
type JobInput struct {
	Job     string  `json:"job"`
	Offset  int64   `json:"offset,omitempty"`
	Timeout float64 `json:"timeout,omitempty"` // wait only, seconds
}

// JobsOutput lists the jobs.
type JobsOutput struct {
	Jobs []sessions.JobInfo `json:"jobs"`
}

// Bounds of a wait call, in seconds.
const (
	defaultJobWait = 60
	maxJobWait     = 600
)

func (s *Server) addJobTools() {
	jobProp := bounded(maxNameChars, str(`The job id a detached cell's result named ("job-1").`))
	addTool(s, &sdk.Tool{
		Name:  "job",
		Title: "Read a job",
		Description: "Status of a job (a cell that runs on past its timeout) and its output from offset on, at most " +
			"one bounded page: pass the offset the last result gave as next (or the eval result's jobOffset) to " +
			"read only what is new. The job's complete output is at its artifact:// URI once it outgrew a page.",
		InputSchema: object([]string{"job"}, map[string]*jsonschema.Schema{
			"job":    jobProp,
			"offset": integer("Byte offset in the job's output to read from (default 0, its start).", 0),
		}),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.readJob)
	addTool(s, &sdk.Tool{
		Name:  "wait",
		Title: "Wait for a job",
		Description: fmt.Sprintf("Wait until a job ends, at most timeout seconds (default %d, at most %d), and "+
			"return its status: its final result when it ended, else state running (call wait again).", defaultJobWait, maxJobWait),
		InputSchema: object([]string{"job"}, map[string]*jsonschema.Schema{
			"job":     jobProp,
			"timeout": number(fmt.Sprintf("Seconds to wait at most (default %d).", defaultJobWait), 0, maxJobWait),
		}),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.waitJob)
	addTool(s, &sdk.Tool{
		Name:  "stop",
		Title: "Stop a job",
		Description: "Stop a job as a cancel stops a cell: interrupt it (KeyboardInterrupt), kill its interpreter " +
			"if it does not stop within the grace window. Returns once it ended; its session keeps its state " +
			"unless the interpreter had to be killed.",
		InputSchema: object([]string{"job"}, map[string]*jsonschema.Schema{"job": jobProp}),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.stopJob)
	addTool(s, &sdk.Tool{
		Name:        "jobs",
		Title:       "List jobs",
		Description: "List the running jobs and the recently ended ones, oldest first, without their output.",
		InputSchema: object(nil, map[string]*jsonschema.Schema{}),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.listJobs)
}

func (s *Server) readJob(_ context.Context, _ *sdk.CallToolRequest, in JobInput) (*sdk.CallToolResult, sessions.JobInfo, error) {
	info, err := s.cfg.Registry.Job(in.Job, in.Offset)
	if err != nil {
		return nil, sessions.JobInfo{}, err
	}
	return text(jobText(info)), info, nil
}

func (s *Server) waitJob(ctx context.Context, req *sdk.CallToolRequest, in JobInput) (*sdk.CallToolResult, sessions.JobInfo, error) {
	defer s.keepAlive(ctx, req, "waiting for "+in.Job)()
	timeout := in.Timeout
	if timeout == 0 {
		timeout = defaultJobWait
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeout*float64(time.Second)))
	defer cancel()
	info, err := s.cfg.Registry.WaitJob(ctx, in.Job)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, sessions.JobInfo{}, err
	}
	return text(jobText(info)), info, nil
}

func (s *Server) stopJob(ctx context.Context, req *sdk.CallToolRequest, in JobInput) (*sdk.CallToolResult, sessions.JobInfo, error) {
	defer s.keepAlive(ctx, req, "stopping "+in.Job)()
	info, err := s.cfg.Registry.StopJob(ctx, in.Job)
	if err != nil {
		return nil, sessions.JobInfo{}, err
	}
	return text(jobText(info)), info, nil
}

func (s *Server) listJobs(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, JobsOutput, error) {
	jobs := s.cfg.Registry.Jobs()
	if len(jobs) == 0 {
		return text("no jobs"), JobsOutput{Jobs: []sessions.JobInfo{}}, nil
	}
	var b strings.Builder
	for i, j := range jobs {
		b.WriteString(jobLine(j) + "\n")
		// Without their output, as the tool says: an ended job's result
		// holds its output's tail. State, status and message say how it
		// ended; job and wait give the result.
		jobs[i].Result = nil
	}
	return text(b.String()), JobsOutput{Jobs: jobs}, nil
}

// jobLine says what a job is and where it stands, in words a model acts on.
func jobLine(j sessions.JobInfo) string {
	elapsed := time.Duration(j.ElapsedMs * float64(time.Millisecond)).Round(time.Second)
	where := fmt.Sprintf("session %q, cell %d of request %s", j.Session, j.Cell, j.Request)
	if j.State == sessions.JobRunning {
		return fmt.Sprintf("[job %s (%s): running for %s; %s of output]", j.ID, where, elapsed, plural.Of(j.OutputBytes, "byte"))
	}
	line := fmt.Sprintf("[job %s (%s): ended %s after %s; %s of output]", j.ID, where, j.Status, elapsed, plural.Of(j.OutputBytes, "byte"))
	if j.Message != "" {
		line += "\n" + j.Message
	}
	return line
}

// jobText is jobLine with the page of output the job tool read, or the
// final result's tail when the job ended and no page was read.
func jobText(j sessions.JobInfo) string {
	var b strings.Builder
	b.WriteString(jobLine(j))
	switch {
	case j.Output != nil:
		out := j.Output
		if out.Elided > 0 {
			fmt.Fprintf(&b, "\n[no longer held: %s before this; all output: %s]", plural.Of(out.Elided, "byte"), j.Artifact)
		}
		if out.Text != "" {
			b.WriteString("\n" + strings.TrimRight(out.Text, "\n"))
		}
		more := "; more is there already: read again from next"
		if !out.More {
			more = ""
		}
		fmt.Fprintf(&b, "\n[output bytes %d..%d; next offset %d%s]", out.Offset, out.Next, out.Next, more)
	case j.Result != nil:
		if body := strings.TrimRight(j.Result.Output.String(), "\n"); body != "" {
			b.WriteString("\n" + body)
		}
	}
	return b.String()
}
