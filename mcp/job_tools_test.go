package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evalhost/evalhost/sessions"
)

// structured decodes a result's structuredContent into v.
func structured(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("structuredContent %s: %v", raw, err)
	}
}

func call(t *testing.T, session *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// textOf joins a result's text blocks.
func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text + "\n")
		}
	}
	return b.String()
}

func TestJobTools(t *testing.T) {
	session, _ := connect(t, nil)
	loop := "import time\nn = 0\nwhile True:\n    print('tick', n, flush=True)\n    n += 1\n    time.sleep(0.05)"
	res := call(t, session, "eval", map[string]any{"session": "j", "cells": []any{
		map[string]any{"code": "kept = 1"},
		map[string]any{"code": loop, "timeout": 1, "onTimeout": "detach", "maxRuntime": 120},
	}})
	var out EvalOutput
	structured(t, res, &out)
	cell := out.Cells[1]
	if res.IsError || out.Status != "detached" || cell.Status != "detached" || cell.Job == "" || cell.JobOffset == 0 ||
		!strings.Contains(textOf(res), "detached: still running as job "+cell.Job) {
		t.Fatalf("eval: isError %v, %+v, text %q; want detached with a job, not an error", res.IsError, out, textOf(res))
	}

	var page struct {
		State  string `json:"state"`
		Output struct {
			Text   string `json:"text"`
			Offset int64  `json:"offset"`
			Next   int64  `json:"next"`
		} `json:"output"`
	}
	for page.Output.Text == "" {
		structured(t, call(t, session, "job", map[string]any{"job": cell.Job, "offset": cell.JobOffset}), &page)
	}
	if page.State != "running" || page.Output.Offset != cell.JobOffset || strings.HasPrefix(page.Output.Text, "tick 0\n") {
		t.Fatalf("job page %+v; want new output from offset %d", page, cell.JobOffset)
	}

	busy := call(t, session, "eval", map[string]any{"session": "j", "cells": []any{map[string]any{"code": "1"}}})
	if !busy.IsError || !strings.Contains(textOf(busy), cell.Job) {
		t.Fatalf("eval in the busy session: %q; want an error naming %s", textOf(busy), cell.Job)
	}

	var waited struct {
		State string `json:"state"`
	}
	structured(t, call(t, session, "wait", map[string]any{"job": cell.Job, "timeout": 0.2}), &waited)
	if waited.State != "running" {
		t.Fatalf("a short wait: state %q, want running", waited.State)
	}
	stopped := call(t, session, "stop", map[string]any{"job": cell.Job})
	var end struct {
		State   string `json:"state"`
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	structured(t, stopped, &end)
	if end.State != "done" || end.Status != "cancelled" || !strings.Contains(textOf(stopped), "stopped by request") {
		t.Fatalf("stop: %+v, text %q", end, textOf(stopped))
	}
	var jobs JobsOutput
	structured(t, call(t, session, "jobs", nil), &jobs)
	if len(jobs.Jobs) != 1 || jobs.Jobs[0].ID != cell.Job {
		t.Fatalf("jobs = %+v", jobs)
	}
	after := call(t, session, "eval", map[string]any{"session": "j", "cells": []any{map[string]any{"code": "kept + 1"}}})
	if after.IsError || !strings.Contains(textOf(after), "2") {
		t.Fatalf("session after the stopped job: %q", textOf(after))
	}
	if unknown := call(t, session, "job", map[string]any{"job": "job-99"}); !unknown.IsError || !strings.Contains(textOf(unknown), `no job "job-99"`) {
		t.Fatalf("unknown job: %q", textOf(unknown))
	}
}

// The jobs tool lists jobs "without their output", in its structured
// content too: each ended job's result came with its output's tail (16 KiB
// each at the default bound, for up to 256 ended jobs), past what its text
// showed and into a model's context where a client forwards it.
func TestJobsListsNoOutput(t *testing.T) {
	session, _ := connect(t, nil)
	res := call(t, session, "eval", map[string]any{"session": "j", "cells": []any{map[string]any{
		"code": "import time\nprint('out' * 1000, flush=True)\ntime.sleep(1.5)", "timeout": 1, "onTimeout": "detach"}}})
	var out EvalOutput
	structured(t, res, &out)
	job := out.Cells[0].Job
	if job == "" {
		t.Fatalf("no job: %q", textOf(res))
	}
	call(t, session, "wait", map[string]any{"job": job})
	listed := call(t, session, "jobs", nil)
	data, err := json.Marshal(listed.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "outout") || !strings.Contains(string(data), `"status":"ok"`) {
		t.Fatalf("jobs' structured content: %.500s; want the ended job's status without its output", data)
	}
}

// A job's line counts its output in bytes, "1 byte" for one: "%d bytes"
// said "1 bytes".
func TestJobTextCounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  sessions.JobInfo
		want []string
	}{
		{"running, one byte", sessions.JobInfo{ID: "j1", State: sessions.JobRunning, OutputBytes: 1},
			[]string{"; 1 byte of output]"}},
		{"ended, two bytes", sessions.JobInfo{ID: "j1", State: sessions.JobDone, Status: sessions.StatusOK, OutputBytes: 2},
			[]string{"; 2 bytes of output]"}},
		{"one byte no longer held", sessions.JobInfo{ID: "j1", State: sessions.JobRunning, OutputBytes: 9, Artifact: "artifact://a",
			Output: &sessions.JobOutput{Offset: 1, Next: 9, Elided: 1, Text: "abcdefgh"}},
			[]string{"[no longer held: 1 byte before this; all output: artifact://a]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := jobText(tc.job)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}
