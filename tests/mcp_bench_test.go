package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkEvalRoundTrip compares one `1+1` cell's round trip through
// `evalhost serve` (NDJSON) and `evalhost mcp` (tools/call over stdio, the
// SDK's client) in the same run, on a warm session, and reports each one's
// median as p50-µs. The target is mcp's p50 at most 2x serve's.
func BenchmarkEvalRoundTrip(b *testing.B) {
	b.Run("serve", func(b *testing.B) {
		s := startBenchServe(b)
		s.eval("warm", "bench", "1+1")
		timeRoundTrips(b, func(i int) { s.eval(fmt.Sprintf("r%d", i), "bench", "1+1") })
	})
	b.Run("mcp", func(b *testing.B) {
		c := startMCP(b)
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
