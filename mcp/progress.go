package mcp

import (
	"context"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startProgress sends progress notifications while the call runs, when the
// client asked for them with a progress token. stop returns once the
// sender has finished.
func (s *Server) startProgress(ctx context.Context, req *sdk.CallToolRequest, col *collector) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || s.cfg.Progress < 0 || req.Session == nil {
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
			case <-col.changed:
			}
			now := time.Now()
			// Progress must grow with every note: the call's elapsed time does.
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
				Progress: now.Sub(col.start).Seconds(), Message: col.note(now)})
		}
	}()
	return func() { close(done); wg.Wait() }
}
