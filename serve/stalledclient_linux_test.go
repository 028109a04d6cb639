package serve_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// A client that stopped reading (its output pipe full) while a cell
// floods it cannot hold Serve for ever once its context ended (evalhost
// serve's second signal): the work ends at once, and a reply the client
// does not take within the bound is given up, so Serve returns. The pipe is
// an *os.File, as evalhost serve's stdout is.
func TestServeContextEndsWithAStalledClient(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
	}()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("second signal")
	srv := serve.New(serve.Config{Sessions: sessions.Config{Home: t.TempDir()}})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, inR, outW) }()
	flood := `{"op":"eval","id":"f","cells":[{"code":"while True: print('z' * 1000)","timeout":600}]}` + "\n"
	if _, err := inW.WriteString(flood); err != nil {
		t.Fatal(err)
	}
	// The client reads until the cell's output is under way, then stops.
	buf := make([]byte, 1<<16)
	for seen := ""; !strings.Contains(seen, `"type":"stdout"`); {
		n, err := outR.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		seen = string(buf[:n])
	}
	testkit.WaitPipeFull(t, outR) // Serve's writes now wait for the client
	cancel(stop)
	select {
	case err := <-served:
		if err != stop {
			t.Fatalf("Serve returned %v, want the context's cause", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return within 30 s of its context's end: it waits for a client that reads nothing")
	}
}
