package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"
)

// benchServe is a minimal client for benchmarks: it counts end lines per id.
type benchServe struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	ends   map[string]chan struct{}
	stdout map[string][]byte
	done   chan struct{}
	wmu    sync.Mutex // one writer of stdin at a time
}

func startBenchServe(b *testing.B) *benchServe {
	cmd := exec.Command(binary, "serve", "--progress", "0", "--max-sessions", "16")
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+b.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &benchServe{cmd: cmd, stdin: stdin, ends: map[string]chan struct{}{}, stdout: map[string][]byte{}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m struct{ Type, ID, Call, Data string }
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			switch m.Type {
			case "end", "request_error":
				s.mu.Lock()
				if ch := s.ends[m.ID]; ch != nil {
					close(ch)
				}
				s.mu.Unlock()
			case "stdout":
				s.mu.Lock()
				s.stdout[m.ID] = append(s.stdout[m.ID], m.Data...)
				s.mu.Unlock()
			case "tool_call": // an agent answering at once
				s.write(fmt.Appendf(nil, `{"op":"tool_result","call":%q,"ok":true,"value":1}`+"\n", m.Call))
			}
		}
	}()
	b.Cleanup(func() { stdin.Close(); <-s.done; cmd.Wait() })
	return s
}

func (s *benchServe) eval(id, session, code string) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.ends[id] = ch
	s.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"op": "eval", "id": id, "session": session, "cells": []any{map[string]any{"code": code, "timeout": 600}}})
	s.write(append(line, '\n'))
	<-ch
}

func (s *benchServe) write(line []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.stdin.Write(line)
}

// BenchmarkServeToolCall: a tool call from Python code in a cell to the
// serve client and back (target p50 <= 1 ms on loopback), timed inside the
// cell so only the bridge and the client's answer count.
func BenchmarkServeToolCall(b *testing.B) {
	s := startBenchServe(b)
	s.eval("warm", "s", "tool.ping()")
	code := fmt.Sprintf(`import time
lat = []
for _ in range(%d):
    t = time.perf_counter()
    tool.ping(x=1)
    lat.append(time.perf_counter() - t)
lat.sort()
print(lat[len(lat)//2] * 1e3, lat[len(lat)*9//10] * 1e3)`, max(b.N, 20))
	b.ResetTimer()
	s.eval("calls", "s", code)
	b.StopTimer()
	var p50, p90 float64
	s.mu.Lock()
	fmt.Sscan(string(s.stdout["calls"]), &p50, &p90)
	s.mu.Unlock()
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p90, "p90-ms")
}

// BenchmarkServeRoundTrip: request line in, end line out, for a one-cell
// 1+1 request on a warm session (target p50 <= 0.5 ms).
func BenchmarkServeRoundTrip(b *testing.B) {
	s := startBenchServe(b)
	s.eval("warm", "s", "1+1")
	var lat []time.Duration
	n := 0
	for b.Loop() {
		n++
		t := time.Now()
		s.eval(fmt.Sprint("r", n), "s", "1+1")
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// BenchmarkServe8Sessions: throughput of trivial cells with 8 sessions
// driven concurrently through one server.
func BenchmarkServe8Sessions(b *testing.B) {
	const sessions, cells = 8, 200
	s := startBenchServe(b)
	for i := range sessions {
		s.eval(fmt.Sprint("warm", i), fmt.Sprint("s", i), "0")
	}
	for b.Loop() {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range cells {
					s.eval(fmt.Sprintf("%d-%d-%d", i, c, start.UnixNano()), fmt.Sprint("s", i), "1+1")
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(sessions*cells)/time.Since(start).Seconds(), "cells/s")
	}
}
