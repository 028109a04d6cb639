package tests

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// tickerCell prints "line N" every period seconds until release exists,
// then "end <count>"; its timeout (1 s) detaches it.
func tickerCell(release string, period float64) map[string]any {
	return map[string]any{"language": "py", "timeout": 1, "onTimeout": "detach", "code": fmt.Sprintf(`
import os, time
n = 0
while not os.path.exists(%q):
    print("line", n, flush=True)
    n += 1
    time.sleep(%g)
print("end", n, flush=True)
`, release, period)}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// jobEnds are the job_end lines for job so far; callers hold c.mu.
func (c *serveClient) jobEnds(job string) []map[string]any {
	var out []map[string]any
	for _, m := range c.noID {
		if m["type"] == "job_end" && m["job"] == job {
			out = append(out, m)
		}
	}
	return out
}

// ask sends an op with a fresh id and returns its reply (or refusal).
func (c *serveClient) ask(id string, req map[string]any) map[string]any {
	c.t.Helper()
	req["id"] = id
	c.send(req)
	var reply map[string]any
	c.waitFor(fmt.Sprint(req["op"], " ", id), func() bool {
		if lines := c.byID[id]; len(lines) > 0 {
			reply = lines[0]
			return true
		}
		return false
	})
	return reply
}

// detachedCellEnd runs an eval whose first cell detaches and returns that
// cell's cell_end.
func detachedCellEnd(t *testing.T, c *serveClient, id string, req map[string]any) map[string]any {
	t.Helper()
	req["op"], req["id"] = "eval", id
	c.send(req)
	lines := c.result(id)
	ends := ofType(lines, "cell_end")
	if len(ends) == 0 || ends[0]["status"] != "detached" || ends[0]["job"] == nil || endOf(t, lines)["status"] != "detached" {
		t.Fatalf("eval %s: %v; want its first cell detached with a job", id, lines)
	}
	return ends[0]
}

var jobLineRe = regexp.MustCompile(`^line (\d+)$`)

// linesOnce fails unless text is "line 0" … "line n-1" then "end n", every
// line once.
func linesOnce(t *testing.T, job, text string) {
	t.Helper()
	next := 0
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if m := jobLineRe.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != next {
				t.Fatalf("job %s: line %d where line %d was due (lost or doubled)", job, n, next)
			}
			next++
			continue
		}
		if l != fmt.Sprintf("end %d", next) || !strings.HasSuffix(text, l+"\n") {
			t.Fatalf("job %s: unexpected line %q after line %d", job, l, next-1)
		}
		return
	}
	t.Fatalf("job %s: output has no end line: %q", job, text)
}

func TestServeJobs(t *testing.T) {
	c := startServe(t, "--grace", "1s", "--progress", "0")
	dir := t.TempDir()
	rel := filepath.Join(dir, "release")
	c.send(map[string]any{"op": "eval", "id": "k", "session": "J", "cwd": dir, "cells": []any{py("kept = 41")}})
	c.result("k")

	// A line a second, timeout 1 s: cell_end detached after it, with the
	// first line.
	cell := detachedCellEnd(t, c, "j1", map[string]any{"session": "J", "cwd": dir, "cells": []any{tickerCell(rel, 1)}})
	job := cell["job"].(string)
	out := cell["output"].(map[string]any)["text"].(string)
	if !strings.HasPrefix(out, "line 0\n") || int(cell["jobOffset"].(float64)) != len(out) {
		t.Fatalf("detached cell_end %v; want the first line and jobOffset at its end", cell)
	}

	// job with the offset: only new lines.
	offset := cell["jobOffset"].(float64)
	var page map[string]any
	for i := 0; ; i++ {
		reply := c.ask(fmt.Sprintf("poll%d", i), map[string]any{"op": "job", "job": job, "offset": offset})
		if reply["type"] != "job" || reply["state"] != "running" || reply["session"] != "J" {
			t.Fatalf("job reply %v", reply)
		}
		page = reply["output"].(map[string]any)
		if page["text"] != "" {
			break
		}
	}
	if text := page["text"].(string); page["offset"] != offset || strings.Contains(text, "line 0\n") || !strings.HasPrefix(text, "line ") {
		t.Fatalf("job page from %v: %v; want only lines after the detached output", offset, page)
	}

	// The busy session refuses, naming the job; another session runs.
	c.send(map[string]any{"op": "eval", "id": "busy", "session": "J", "cwd": dir, "cells": []any{py("1")}})
	refused := c.result("busy")
	if len(refused) != 1 || refused[0]["type"] != "request_error" || !strings.Contains(refused[0]["error"].(string), job) {
		t.Fatalf("request to the busy session: %v; want a request_error naming %s", refused, job)
	}
	c.send(map[string]any{"op": "eval", "id": "other", "session": "K", "cwd": dir, "cells": []any{py("print('other ran')")}})
	if lines := c.result("other"); endOf(t, lines)["status"] != "ok" || stdoutOf(lines) != "other ran\n" {
		t.Fatalf("another session while the job runs: %v", lines)
	}

	// wait returns when it ends, after its job_end.
	c.send(map[string]any{"op": "wait", "id": "w1", "job": job})
	touch(t, rel)
	var waited map[string]any
	c.waitFor("wait reply", func() bool {
		for _, m := range c.byID["w1"] {
			if m["type"] == "job" {
				waited = m
				return true
			}
		}
		return false
	})
	c.mu.Lock()
	ends := c.jobEnds(job)
	c.mu.Unlock()
	if waited["state"] != "done" || waited["status"] != "ok" || len(ends) != 1 || ends[0]["status"] != "ok" {
		t.Fatalf("wait: %v; job_end lines %v; want done, ok, one job_end before it", waited, ends)
	}

	// stop on a second job interrupts it; the session keeps its state.
	loop := map[string]any{"language": "py", "timeout": 1, "onTimeout": "detach",
		"code": "import time\nprint('looping', flush=True)\nwhile True: time.sleep(0.05)"}
	job2 := detachedCellEnd(t, c, "j2", map[string]any{"session": "J", "cwd": dir, "cells": []any{loop}})["job"].(string)
	stopped := c.ask("s2", map[string]any{"op": "stop", "job": job2})
	if stopped["type"] != "job" || stopped["status"] != "cancelled" || !strings.Contains(stopped["message"].(string), "stopped by request") {
		t.Fatalf("stop: %v", stopped)
	}
	if res := stopped["result"].(map[string]any); res["stateLost"] != false {
		t.Fatalf("stopped job lost the session's state: %v", res)
	}
	c.send(map[string]any{"op": "eval", "id": "after", "session": "J", "cwd": dir, "cells": []any{py("print(kept + 1)")}})
	if out := stdoutOf(c.result("after")); out != "42\n" {
		t.Fatalf("session after a stopped job: %q, want 42", out)
	}

	// An interpreter that dies under a job is reported, not retried.
	dies := map[string]any{"language": "py", "timeout": 1, "onTimeout": "detach",
		"code": "import os, time, signal\nprint('up', flush=True)\ntime.sleep(1.5)\nos.kill(os.getpid(), signal.SIGKILL)"}
	job3 := detachedCellEnd(t, c, "j3", map[string]any{"session": "D", "cwd": dir, "cells": []any{dies}})["job"].(string)
	died := c.ask("w3", map[string]any{"op": "wait", "job": job3})
	if res := died["result"].(map[string]any); died["status"] != "killed" || res["retried"] != false || !strings.Contains(died["message"].(string), "not retried") {
		t.Fatalf("job whose interpreter died: %v", died)
	}

	// maxRuntime stops one as a timeout.
	bounded := map[string]any{"language": "py", "timeout": 1, "onTimeout": "detach", "maxRuntime": 2,
		"code": "import time\nprint('long', flush=True)\nwhile True: time.sleep(0.05)"}
	job4 := detachedCellEnd(t, c, "j4", map[string]any{"session": "M", "cwd": dir, "cells": []any{bounded}})["job"].(string)
	timedOut := c.ask("w4", map[string]any{"op": "wait", "job": job4})
	if timedOut["status"] != "timeout" || !strings.Contains(timedOut["message"].(string), "maxRuntime") {
		t.Fatalf("job past its maxRuntime: %v", timedOut)
	}

	// Shutdown stops a running job and says so.
	job5 := detachedCellEnd(t, c, "j5", map[string]any{"session": "S", "cwd": dir, "cells": []any{loop}})["job"].(string)
	c.send(map[string]any{"op": "shutdown"})
	if code := c.exitCode(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	c.readerW.Wait()
	c.mu.Lock()
	ends5 := c.jobEnds(job5)
	all := map[string]int{}
	for _, j := range []string{job, job2, job3, job4, job5} {
		all[j] = len(c.jobEnds(j))
	}
	c.mu.Unlock()
	if len(ends5) != 1 || ends5[0]["status"] != "cancelled" || !strings.Contains(ends5[0]["message"].(string), "shut down") {
		t.Fatalf("job at shutdown: %v; want one job_end, cancelled, saying evalhost shut down", ends5)
	}
	for j, n := range all {
		if n != 1 {
			t.Errorf("job %s: %d job_end lines, want 1", j, n)
		}
	}
	checkPidsGone(t, c.pids())
}

// --drain-jobs lets a running job end on its own at shutdown.
func TestServeDrainJobs(t *testing.T) {
	c := startServe(t, "--drain-jobs", "--progress", "0")
	dir := t.TempDir()
	rel := filepath.Join(dir, "release")
	job := detachedCellEnd(t, c, "j", map[string]any{"session": "S", "cwd": dir, "cells": []any{tickerCell(rel, 0.05)}})["job"].(string)
	c.send(map[string]any{"op": "shutdown"})
	touch(t, rel)
	if code := c.exitCode(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	c.readerW.Wait()
	c.mu.Lock()
	ends := c.jobEnds(job)
	c.mu.Unlock()
	if len(ends) != 1 || ends[0]["status"] != "ok" {
		t.Fatalf("job_end at a draining shutdown: %v; want one, ok", ends)
	}
}

// Eight sessions each run a detached job while 1,000 job requests read
// their output by offset: every job ends exactly once, and each job's
// output read page by page is all of it, every line once, its checksum
// that of the job's artifact.
func TestServeJobsUnderLoad(t *testing.T) {
	const sessions, polls = 8, 1000
	c := startServe(t, "--max-sessions", "8", "--max-output", "2048", "--progress", "0")
	dir := t.TempDir()
	jobs := make([]string, sessions)
	for i := range sessions {
		c.send(map[string]any{"op": "eval", "id": fmt.Sprintf("e%d", i), "session": fmt.Sprintf("L%d", i), "cwd": dir,
			"cells": []any{tickerCell(filepath.Join(dir, fmt.Sprintf("release%d", i)), 0.002)}})
	}
	for i := range sessions {
		jobs[i] = ofType(c.result(fmt.Sprintf("e%d", i)), "cell_end")[0]["job"].(string)
	}
	texts := make([]strings.Builder, sessions)
	offsets := make([]float64, sessions)
	var outputBytes []float64
	// One round asks every job for its output from where the last reply
	// left off, all at once; the next round waits for every answer.
	round := func(tag string) {
		outputBytes = outputBytes[:0]
		for i, job := range jobs {
			c.send(map[string]any{"op": "job", "id": fmt.Sprintf("%s-%d", tag, i), "job": job, "offset": offsets[i]})
		}
		for i := range jobs {
			id := fmt.Sprintf("%s-%d", tag, i)
			c.waitFor(id, func() bool { return len(c.byID[id]) > 0 })
			c.mu.Lock()
			reply := c.byID[id][0]
			c.mu.Unlock()
			page, ok := reply["output"].(map[string]any)
			if !ok || page["offset"] != offsets[i] {
				t.Fatalf("job reply %v; want a page from offset %v", reply, offsets[i])
			}
			texts[i].WriteString(page["text"].(string))
			offsets[i] = page["next"].(float64)
			outputBytes = append(outputBytes, reply["outputBytes"].(float64))
		}
	}
	for k := range polls / sessions {
		round(fmt.Sprintf("p%d", k))
	}
	for i := range sessions {
		touch(t, filepath.Join(dir, fmt.Sprintf("release%d", i)))
	}
	results := make([]map[string]any, sessions)
	for i, job := range jobs {
		results[i] = c.ask(fmt.Sprintf("w%d", i), map[string]any{"op": "wait", "job": job})
	}
	for k := 0; ; k++ {
		round(fmt.Sprintf("f%d", k))
		rest := false
		for i := range jobs {
			rest = rest || offsets[i] < outputBytes[i]
		}
		if !rest {
			break
		}
	}
	c.mu.Lock()
	endCounts := make([]int, sessions)
	for i, job := range jobs {
		endCounts[i] = len(c.jobEnds(job))
	}
	c.mu.Unlock()
	for i, job := range jobs {
		if results[i]["status"] != "ok" || endCounts[i] != 1 {
			t.Errorf("job %s: %v, %d job_end lines; want ok, one", job, results[i]["status"], endCounts[i])
			continue
		}
		text := texts[i].String()
		linesOnce(t, job, text)
		output := results[i]["result"].(map[string]any)["output"].(map[string]any)
		path, _ := output["artifactPath"].(string)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("job %s: artifact: %v (output %v)", job, err, output)
		}
		if sha256.Sum256([]byte(text)) != sha256.Sum256(raw) {
			t.Errorf("job %s: %d bytes read by offset, %d in its artifact: checksums differ", job, len(text), len(raw))
		}
	}
}
