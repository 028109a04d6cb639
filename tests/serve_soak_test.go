package tests

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	soak      = flag.Bool("soak", false, "run the serve soak test (thousands of requests with random faults)")
	soakReqs  = flag.Int("soak.requests", 3000, "requests the serve soak sends")
	soakConns = flag.Int("soak.sessions", 8, "sessions the serve soak spreads them over")
)

// TestServeSoak drives one `evalhost serve` with thousands of requests over
// 8 sessions, with random kills, timeouts and cancels mixed in. Every
// request must get exactly one end with the status its fault implies, and
// no interpreter may outlive the server. Run with -soak.
func TestServeSoak(t *testing.T) {
	if !*soak {
		t.Skip("run with -soak")
	}
	c := startServe(t, "--progress", "0", "--grace", "500ms", "--max-sessions", fmt.Sprint(*soakConns))
	type fault struct {
		code    string
		timeout float64
		cancel  bool
		want    []string // acceptable end statuses
	}
	faults := []fault{
		{code: "x = 1 + 1", want: []string{"ok"}},
		{code: "print('out' * 100)", want: []string{"ok"}},
		{code: "undefined_name", want: []string{"error"}},
		{code: "import os; os.kill(os.getpid(), 9)", want: []string{"killed"}},
		{code: "import time; time.sleep(5)", timeout: 1, want: []string{"timeout"}},
		{code: "import time; time.sleep(30)", cancel: true, want: []string{"cancelled"}},
	}
	start := time.Now()
	var mu sync.Mutex
	wants := map[string][]string{}
	var wg sync.WaitGroup
	per := *soakReqs / *soakConns
	for s := range *soakConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(s), 7))
			for i := range per {
				f := faults[rng.IntN(len(faults))]
				if rng.IntN(4) != 0 && (f.cancel || f.timeout > 0) {
					f = faults[0] // keep slow faults rarer
				}
				id := fmt.Sprintf("s%d-%d", s, i)
				mu.Lock()
				wants[id] = f.want
				mu.Unlock()
				cell := map[string]any{"code": f.code}
				if f.timeout > 0 {
					cell["timeout"] = f.timeout
				}
				c.send(map[string]any{"op": "eval", "id": id, "session": fmt.Sprint("soak", s), "cells": []any{cell}})
				if f.cancel {
					time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
					c.send(map[string]any{"op": "cancel", "id": id})
				}
				c.result(id)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	c.send(map[string]any{"op": "shutdown"})
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("serve exit: %v", err)
	}
	c.readerW.Wait()
	c.mu.Lock()
	statuses := map[string]int{}
	for id, want := range wants {
		ends := ofType(c.byID[id], "end")
		if len(ends) != 1 {
			t.Errorf("request %s got %d end lines, want exactly 1", id, len(ends))
			continue
		}
		status := ends[0]["status"].(string)
		statuses[status]++
		if !strings.Contains(strings.Join(want, ","), status) {
			t.Errorf("request %s ended %s, want one of %v", id, status, want)
		}
	}
	c.mu.Unlock()
	pids := c.pids()
	checkPidsGone(t, pids)
	t.Logf("%d requests in %s (%.0f/s), %d interpreters started, statuses %v", len(wants), elapsed.Round(time.Millisecond),
		float64(len(wants))/elapsed.Seconds(), len(pids), statuses)
}
