package serve_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// index is the position of the first line read so far that matches.
func (c *client) index(match func(m map[string]any) bool) int {
	for i, m := range c.seen {
		if match(m) {
			return i
		}
	}
	return -1
}

// A job's lines come in one order whatever the timing: its cell_end, its
// request's end, its job_end, then the answer to a wait for it.
func TestServeJobLineOrder(t *testing.T) {
	c := startServer(t, context.Background(), serve.Config{})
	short := map[string]any{"code": "import time\nprint('a', flush=True)\ntime.sleep(1.3)\nprint('b', flush=True)",
		"timeout": 1, "onTimeout": "detach"}
	c.send(map[string]any{"op": "eval", "id": "e", "session": "S", "cells": []any{short, py("print('skipped')")}})
	end := c.reply("end", "e")
	cellEnds := 0
	var job string
	for _, m := range c.of("e") {
		if m["type"] == "cell_end" {
			cellEnds++
			if m["cell"] == float64(0) {
				job, _ = m["job"].(string)
			}
		}
	}
	if end["status"] != "detached" || end["failedCell"] != float64(0) || cellEnds != 2 || job == "" {
		t.Fatalf("end %v with %d cell_end lines, job %q; want detached at cell 0, both cells ended, a job", end, cellEnds, job)
	}
	c.send(map[string]any{"op": "wait", "id": "w", "job": job})
	waited := c.reply("job", "w")
	if waited["job"] != job || waited["state"] != "done" || waited["status"] != "ok" {
		t.Fatalf("wait = %v", waited)
	}
	jobEnd := c.index(func(m map[string]any) bool { return m["type"] == "job_end" && m["job"] == job })
	endAt := c.index(func(m map[string]any) bool { return m["type"] == "end" && m["id"] == "e" })
	waitAt := c.index(func(m map[string]any) bool { return m["type"] == "job" && m["id"] == "w" })
	if !(endAt < jobEnd && jobEnd < waitAt) {
		t.Fatalf("end at %d, job_end at %d, wait's answer at %d; want them in that order", endAt, jobEnd, waitAt)
	}
	c.send(map[string]any{"op": "shutdown"})
	if err := c.wait(); err != nil {
		t.Fatal(err)
	}
}

// The end of Serve's context kills a job that ignores interrupts; a wait
// for it is answered with its end, and its job_end says what stopped it.
func TestServeContextEndsJobs(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop now")
	c := startServer(t, ctx, serve.Config{Sessions: sessions.Config{Grace: 10 * time.Minute}})
	hold := map[string]any{"code": "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('go', flush=True)\ntime.sleep(600)",
		"timeout": 1, "onTimeout": "detach"}
	c.send(map[string]any{"op": "eval", "id": "h", "cells": []any{hold}})
	c.reply("end", "h")
	cellEnd := c.reply("cell_end", "h")
	job := cellEnd["job"].(string)
	c.send(map[string]any{"op": "wait", "id": "w", "job": job})
	c.send(map[string]any{"op": "ping", "id": "p"})
	c.reply("pong", "p") // the wait was taken
	cancel(stop)
	if err := c.wait(); err != stop {
		t.Fatalf("Serve returned %v, want the context's cause", err)
	}
	jobEnd := c.until("job_end", func(m map[string]any) bool { return m["type"] == "job_end" })
	waited := c.reply("job", "w")
	if jobEnd["state"] != "done" || !strings.Contains(jobEnd["message"].(string), "every interpreter was killed") || waited["state"] != "done" {
		t.Fatalf("job_end %v, wait's answer %v; want the job ended, saying why", jobEnd, waited)
	}
}

func TestServeJobRequestErrors(t *testing.T) {
	c := startServer(t, context.Background(), serve.Config{})
	tests := []struct {
		name string
		req  map[string]any
		says string
	}{
		{"job without a job", map[string]any{"op": "job", "id": "a"}, `missing "job"`},
		{"job of an unknown job", map[string]any{"op": "job", "id": "b", "job": "job-77"}, `no job "job-77"`},
		{"negative offset", map[string]any{"op": "job", "id": "c", "job": "job-77", "offset": -1}, `"offset" must be a whole number`},
		{"fractional offset", map[string]any{"op": "job", "id": "d", "job": "job-77", "offset": 1.5}, `"offset" must be a whole number`},
		{"wait for an unknown job", map[string]any{"op": "wait", "id": "e", "job": "job-77"}, `no job "job-77"`},
		{"wait with a bad timeout", map[string]any{"op": "wait", "id": "f", "job": "job-77", "timeout": 0}, `"timeout" must be a positive number`},
		{"stop an unknown job", map[string]any{"op": "stop", "id": "g", "job": "job-77"}, `no job "job-77"`},
		{"bad onTimeout", map[string]any{"op": "eval", "id": "h", "cells": []any{map[string]any{"code": "1", "onTimeout": "later"}}}, `onTimeout "later" is not`},
		{"onTimeout not a string", map[string]any{"op": "eval", "id": "i", "onTimeout": true, "cells": []any{py("1")}}, `onTimeout must be "interrupt" or "detach"`},
		{"maxRuntime over a day", map[string]any{"op": "eval", "id": "j", "cells": []any{map[string]any{"code": "1", "onTimeout": "detach", "maxRuntime": 100000}}}, "cells[0].maxRuntime must be a positive number"},
		{"maxRuntime too small to count", map[string]any{"op": "eval", "id": "m", "cells": []any{map[string]any{"code": "1", "onTimeout": "detach", "maxRuntime": 1e-12}}}, "maxRuntime 1ns is out of range"},
		{"maxRuntime without detach", map[string]any{"op": "eval", "id": "k", "maxRuntime": 60, "cells": []any{py("1")}}, `only to a cell with onTimeout "detach"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.send(tt.req)
			got := c.reply("request_error", tt.req["id"].(string))
			if got["op"] != tt.req["op"] || !strings.Contains(got["error"].(string), tt.says) {
				t.Fatalf("request_error = %v; want op %v saying %q", got, tt.req["op"], tt.says)
			}
		})
	}
	c.send(map[string]any{"op": "jobs", "id": "l"})
	if jobs := c.reply("jobs", "l"); len(jobs["jobs"].([]any)) != 0 {
		t.Fatalf("jobs = %v; want none", jobs)
	}
}

// A wait's timeout too small to count as a Duration is the shortest wait,
// not none: it was read as "no timeout" and the wait never answered while
// the job ran.
func TestServeWaitTinyTimeout(t *testing.T) {
	c := startServer(t, context.Background(), serve.Config{})
	long := map[string]any{"code": "import time\ntime.sleep(600)", "timeout": 1, "onTimeout": "detach"}
	c.send(map[string]any{"op": "eval", "id": "e", "cells": []any{long}})
	job := c.reply("cell_end", "e")["job"].(string)
	c.send(map[string]any{"op": "wait", "id": "w", "job": job, "timeout": 1e-300})
	if waited := c.reply("job", "w"); waited["state"] != "running" {
		t.Fatalf("wait = %v; want the job still running", waited)
	}
	c.send(map[string]any{"op": "stop", "id": "s", "job": job})
	c.reply("job", "s")
	c.send(map[string]any{"op": "shutdown"})
	if err := c.wait(); err != nil {
		t.Fatal(err)
	}
}
