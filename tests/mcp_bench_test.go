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

// BenchmarkMCPClientCost measures the SDK's Go client on its own: the
// same tools/call round trip as BenchmarkEvalRoundTrip, against a child
// process that answers each line at once with a canned result
// (TestHelperInstantMCP), so that what is left is the client, the pipes
// and the scheduler. line is lineMCP's round trip against the same
// server, the floor.
func BenchmarkMCPClientCost(b *testing.B) {
	for _, v := range []struct{ name, protocol string }{{"sdk", ""}, {"sdk-2025-11-25", "2025-11-25"}} {
		b.Run(v.name, func(b *testing.B) {
			client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
			session, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: instantMCP()}, &sdk.ClientSessionOptions{ProtocolVersion: v.protocol})
			if err != nil {
				b.Fatal(err)
			}
			defer session.Close()
			params := &sdk.CallToolParams{Name: "eval", Arguments: map[string]any{"session": "bench", "cells": []any{map[string]any{"code": "1+1"}}}}
			timeRoundTrips(b, func(int) {
				if res, err := session.CallTool(context.Background(), params); err != nil || !strings.Contains(allText(res), "2") {
					b.Fatalf("call: %v %v", err, res)
				}
			})
		})
	}
	b.Run("line", func(b *testing.B) {
		cmd := instantMCP()
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { stdin.Close(); cmd.Wait() }()
		c := &lineMCP{stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
		timeRoundTrips(b, func(i int) { c.eval(b, i) })
	})
}

func instantMCP() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperInstantMCP$")
	cmd.Env = append(os.Environ(), "EVALHOST_TEST_HELPER=instant-mcp")
	cmd.Stderr = os.Stderr
	return cmd
}

// TestHelperInstantMCP is instantMCP's process: it answers MCP requests on
// stdin at once: initialize and server/discover with a tools capability,
// tools/call with the result of a 1+1 cell (as evalhost's, less
// structuredContent), the rest with {}.
func TestHelperInstantMCP(t *testing.T) {
	if os.Getenv("EVALHOST_TEST_HELPER") != "instant-mcp" {
		t.Skip("a helper process, run by instantMCP")
	}
	const callResult = `{"content":[{"type":"text","text":"[cell 1/1 (py) ok; execution 2; 0s]\n2"}]}`
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := gjson.Parse(sc.Text())
		id := m.Get("id")
		if !id.Exists() {
			continue
		}
		result := `{}`
		switch m.Get("method").Str {
		case "initialize":
			result = `{"protocolVersion":` + m.Get("params.protocolVersion").Raw + `,"capabilities":{"tools":{}},"serverInfo":{"name":"instant","version":"1"}}`
		case "server/discover":
			result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
		case "tools/call":
			result = callResult
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id.Raw, result)
		if out.Flush() != nil {
			os.Exit(0)
		}
	}
	os.Exit(0)
}
