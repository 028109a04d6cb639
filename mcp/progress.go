package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startProgress sends progress notifications while a call runs, when the
// client asked for them with a progress token: every Config.Progress, and
// at once whenever changed delivers (nil: only the ticks). note says where
// the call stands. stop returns once the sender has finished.
func (s *Server) startProgress(ctx context.Context, req *sdk.CallToolRequest, start time.Time,
	changed <-chan struct{}, note func(time.Time) string) (stop func()) {
	if req == nil || req.Params == nil || req.Session == nil || s.cfg.Progress < 0 {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.cfg.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			case <-changed:
			}
			now := time.Now()
			// Progress must grow with every note: the call's elapsed time does.
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
				Progress: now.Sub(start).Seconds(), Message: note(now)})
		}
	}()
	return func() { close(done); wg.Wait() }
}

// keepAlive is startProgress for a tool besides eval that can run long
// (wait, stop, reset, notebook_run): a client that ends a request at its
// timeout unless progress comes (the TypeScript SDK's, 60 s by default)
// keeps it. Its note is "TOOL: WHAT for 12.0s".
func (s *Server) keepAlive(ctx context.Context, req *sdk.CallToolRequest, what string) (stop func()) {
	start := time.Now()
	return s.startProgress(ctx, req, start, nil, func(now time.Time) string {
		return fmt.Sprintf("%s: %s for %.1fs", req.Params.Name, what, now.Sub(start).Seconds())
	})
}
