package remote

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/remotetest"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// A gateway that stops answering (SIGSTOP: its connections stay open, no
// byte comes back) mid-cell: the cell ends at its timeout, the interrupt
// and the kernel delete unanswered, saying the state is lost.
// Nothing waits for the gateway to come back: it comes back only after the
// request, so a request that waits for it hangs to the watchdog (no upper
// bound on the time, which load stretches).
func TestGatewayStopsAnswering(t *testing.T) {
	g := remotetest.StartGateway(t, remotetest.GatewayOptions{})
	t.Cleanup(leakcheck.Watchdog(t, 4*time.Minute))
	leakcheck.Check(t, leakcheck.Options{IgnoreProcess: remotetest.Owns})
	home := t.TempDir()
	r := sessions.New(sessions.Config{Home: home, Grace: grace, StartTimeout: 60 * time.Second,
		Sink: streamsink.Options{Store: streamsink.NewStore(filepath.Join(home, "artifacts"))},
		Starters: map[string]sessions.Starter{sessions.LangPython: sessions.GatewayStarter(sessions.GatewayConfig{
			URL: g.URL, Token: g.Token, Environ: append(os.Environ(), "KERNEL_USERNAME="+kernelUser)})}})
	t.Cleanup(func() {
		g.Resume() // before Close: the kernel delete then has an answer
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	const timeout = 2 * time.Second
	c := &collector{}
	paused, ended := c.when("running"), make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-paused:
			g.Pause()
		case <-ended:
		}
	}()
	begin := time.Now()
	res, err := r.Eval(context.Background(), sessions.Request{Session: "stalled", Cwd: t.TempDir(), Cells: []sessions.Cell{{
		Language: sessions.LangPython, Timeout: timeout, Code: "import time\nprint('running', flush=True)\ntime.sleep(60)"}}}, c.emit)
	took := time.Since(begin)
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	t.Logf("ended after %v: %+v", took.Round(time.Millisecond), res.Cells[0])
	if res.Status != sessions.StatusTimeout || !res.Cells[0].StateLost {
		t.Errorf("cell = %+v, want timed out with state lost", res.Cells[0])
	}
	if c.text(frames.TypeStdout) != "running\n" {
		t.Errorf("stdout %q: output before the stall was lost", c.text(frames.TypeStdout))
	}
}
