package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// BenchmarkEvalRoundTrip compares one `1+1` cell's round trip through
// `evalhost serve` (NDJSON, a minimal line client) and `evalhost mcp`
// (tools/call over stdio) in the same run, on a warm session, and reports
// each one's median as p50-µs. The target is mcp's p50 at most 2x serve's.
// mcp is measured with three clients: the SDK's Go client as it comes
// (MCP 2026-07-28: every request carries its protocol fields in _meta,
// which the SDK's server path takes), the SDK's client on MCP 2025-11-25
// (the shape Claude Code and the Python SDK send, which the fast path
// takes), and a minimal line client like serve's, which compares like
// with like.
func BenchmarkEvalRoundTrip(b *testing.B) {
	b.Run("serve", func(b *testing.B) {
		s := startBenchServe(b)
		s.eval("warm", "bench", "1+1")
		timeRoundTrips(b, func(i int) { s.eval(fmt.Sprintf("r%d", i), "bench", "1+1") })
	})
	for _, v := range []struct{ name, protocol string }{{"mcp", ""}, {"mcp-sdk-2025-11-25", "2025-11-25"}} {
		b.Run(v.name, func(b *testing.B) {
			c := startMCPClient(b, &sdk.ClientSessionOptions{ProtocolVersion: v.protocol})
			params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"session": "bench", "cells": []any{map[string]any{"code": "1+1"}}}}
			call := func(int) {
				res, err := c.session.CallTool(context.Background(), params)
				if err != nil || res.IsError || !strings.Contains(allText(res), "2") {
					b.Fatalf("eval 1+1: %v %v", err, res)
				}
			}
			call(0)
			timeRoundTrips(b, call)
		})
	}
	b.Run("mcp-line", func(b *testing.B) {
		c := startLineMCP(b)
		c.eval(b, 0)
		timeRoundTrips(b, func(i int) { c.eval(b, i+1) })
	})
}

func timeRoundTrips(b *testing.B, roundTrip func(i int)) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		roundTrip(i)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
}

// lineMCP is a minimal MCP client for benchmarks, of the kind benchServe
// is: it writes request lines and reads response lines, nothing more.
type lineMCP struct {
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startLineMCP(b *testing.B) *lineMCP {
	cmd := exec.Command(binary, "mcp")
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+b.TempDir())
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	c := &lineMCP{stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
	c.response(b, `"init"`)
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return c
}

func (c *lineMCP) eval(b *testing.B, id int) {
	fmt.Fprintf(c.stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"eval","arguments":{"session":"bench","cells":[{"code":"1+1"}]}}}`+"\n", id)
	res := c.response(b, fmt.Sprint(id))
	if res.Get("result.isError").Bool() || !strings.Contains(res.Get("result.content.0.text").Str, "2") {
		b.Fatalf("eval 1+1: %s", res.Raw)
	}
}

// response reads lines up to the response with this id (raw JSON).
func (c *lineMCP) response(b *testing.B, id string) gjson.Result {
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			b.Fatalf("reading the response to %s: %v", id, err)
		}
		if m := gjson.ParseBytes(line); m.Get("id").Raw == id {
			return m
		}
	}
}
