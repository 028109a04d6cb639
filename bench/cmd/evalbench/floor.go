package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// floorCode is floor.py: a Python loop that reads a JSON line, evaluates
// and writes a JSON reply. Every round-trip figure is measured interleaved
// with it, from the same client, so the ratio to it holds on a loaded
// machine (bench/serve_py.py and jupyter_bench.py run the same file).
//
//go:embed floor.py
var floorCode string

// floor is one running floor loop, reached directly (one pipe round trip
// per request) or through the relay floor (two).
type floor struct {
	name string
	cmd  *exec.Cmd
	w    io.WriteCloser
	r    *bufio.Reader
	seq  int
}

// startFloor starts the one-hop floor: floor.py, the client's child.
func startFloor(python string) (*floor, error) {
	return startLoop("floor loop", python, "-c", floorCode)
}

// startRelayFloor starts the two-hop floor: this program re-executed as a
// relay (relay.go) between the client and floor.py, as serve sits between
// its client and the runner.
func startRelayFloor(python string) (*floor, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("relay floor: %w", err)
	}
	return startLoop("relay floor", self, relayArgs(python)...)
}

func startLoop(name, bin string, args ...string) (*floor, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the %s: %w", name, err)
	}
	return &floor{name: name, cmd: cmd, w: w, r: bufio.NewReader(r)}, nil
}

// roundTrip sends code and waits for its reply, as a client of serve does:
// encode a request, write it, read a line, decode it.
func (f *floor) roundTrip(code string) (time.Duration, error) {
	f.seq++
	id := fmt.Sprintf("f%d", f.seq)
	start := time.Now()
	line, err := json.Marshal(map[string]string{"id": id, "code": code})
	if err != nil {
		return 0, err
	}
	if _, err := f.w.Write(append(line, '\n')); err != nil {
		return 0, fmt.Errorf("%s: %w", f.name, err)
	}
	reply, err := f.r.ReadBytes('\n')
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.name, err)
	}
	var rep struct{ ID, Status string }
	if err := json.Unmarshal(reply, &rep); err != nil || rep.ID != id || rep.Status != "ok" {
		return 0, fmt.Errorf("%s answered %q to %s (%v)", f.name, reply, id, err)
	}
	return time.Since(start), nil
}

func (f *floor) close() error {
	f.w.Close()
	return f.cmd.Wait()
}
