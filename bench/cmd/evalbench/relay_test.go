package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// TestMain lets the test binary be the relay floor, as evalbench is when
// startRelayFloor re-executes it.
func TestMain(m *testing.M) {
	if ran, err := relayMain(os.Args[1:]); ran {
		if err != nil {
			fmt.Fprintln(os.Stderr, "evalbench test relay:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3:", err)
	}
	return p
}

// relayRequests is n request lines, sent at once: a relay must answer each
// in order, whatever it has buffered.
func relayRequests(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "{\"id\": \"f%d\", \"code\": \"%d+1\"}\n", i, i)
	}
	return b.Bytes()
}

// checkRelayed says how out differs from floor.py's replies to
// relayRequests(n), one per request, in order.
func checkRelayed(out []byte, n int) error {
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != n {
		return fmt.Errorf("%d reply lines to %d requests: %q", len(lines), n, out)
	}
	for i, l := range lines {
		var rep struct{ ID, Status, Result string }
		if err := json.Unmarshal([]byte(l), &rep); err != nil {
			return fmt.Errorf("reply %d %q: %w", i, l, err)
		}
		if want := fmt.Sprintf("f%d", i); rep.ID != want || rep.Status != "ok" || rep.Result != fmt.Sprint(i+1) {
			return fmt.Errorf("reply %d is %q, want id %s, status ok, result %d", i, l, want, i+1)
		}
	}
	return nil
}

// dropRequest forwards every request but the third.
func dropRequest(in *bufio.Reader, out, to io.Writer, from *bufio.Reader) error {
	n := 0
	return relayLines(bufio.NewReader(readerFunc(func(p []byte) (int, error) {
		for {
			line, err := in.ReadBytes('\n')
			if n++; n == 3 && err == nil {
				continue
			}
			return copy(p, line), err // a request line fits in bufio's buffer
		}
	})), out, to, from)
}

// dropReply reads every reply but writes the third's nowhere.
func dropReply(in *bufio.Reader, out, to io.Writer, from *bufio.Reader) error {
	n := 0
	return relayLines(in, writerFunc(func(p []byte) (int, error) {
		if n++; n == 3 {
			return len(p), nil
		}
		return out.Write(p)
	}), to, from)
}

// swapPairs relays requests two at a time, the second of each pair first.
func swapPairs(in *bufio.Reader, out, to io.Writer, from *bufio.Reader) error {
	for {
		a, errA := in.ReadBytes('\n')
		b, errB := in.ReadBytes('\n')
		for _, l := range [][]byte{b, a} {
			if len(l) == 0 {
				continue
			}
			var buf bytes.Buffer
			if err := relayLines(bufio.NewReader(bytes.NewReader(l)), &buf, to, from); err != nil {
				return err
			}
			if _, err := out.Write(buf.Bytes()); err != nil {
				return err
			}
		}
		if errA != nil || errB != nil {
			return nil
		}
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestRelayFloor: the relay floor answers every request, in order, as a
// process (the way evalbench runs it) and in this one; relays that drop or
// reorder a line are caught by the same check.
func TestRelayFloor(t *testing.T) {
	py := python(t)
	const n = 50
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	inProcess := func(r relayFunc) func(io.Reader, io.Writer) error {
		return func(in io.Reader, out io.Writer) error { return relayThrough(py, in, out, r) }
	}
	tests := []struct {
		name  string
		run   func(in io.Reader, out io.Writer) error
		wrong bool
	}{
		{"evalbench relay-floor", func(in io.Reader, out io.Writer) error {
			cmd := exec.Command(self, relayArgs(py)...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, os.Stderr
			return cmd.Run()
		}, false},
		{"relayLines", inProcess(relayLines), false},
		{"drops a request", inProcess(dropRequest), true},
		{"drops a reply", inProcess(dropReply), true},
		{"reorders requests", inProcess(swapPairs), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(leakcheck.Watchdog(t, time.Minute))
			leakcheck.Check(t, leakcheck.Options{})
			var out bytes.Buffer
			if err := tt.run(bytes.NewReader(relayRequests(n)), &out); err != nil {
				t.Fatal(err)
			}
			err := checkRelayed(out.Bytes(), n)
			if tt.wrong && err == nil {
				t.Fatalf("a relay that %s passed the check:\n%s", tt.name, out.Bytes())
			}
			if !tt.wrong && err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRelayFloorArgs: relay-floor takes only -python, and says so.
func TestRelayFloorArgs(t *testing.T) {
	for _, args := range [][]string{{relayCmd, "extra"}, {relayCmd, "-runs", "3"}} {
		ran, err := relayMain(args)
		if !ran || err == nil {
			t.Errorf("relayMain(%q) = %v, %v; want it run and refused", args, ran, err)
		}
	}
	if ran, err := relayMain([]string{"-runs", "3"}); ran || err != nil {
		t.Errorf("relayMain(-runs 3) = %v, %v; want it left to evalbench's flags", ran, err)
	}
}

// TestRelayFloorRoundTrip: the client the measurer uses gets each reply
// through the relay floor re-executed, then closes it cleanly. A lost line
// would leave the client waiting: the watchdog turns that into a failure.
func TestRelayFloorRoundTrip(t *testing.T) {
	py := python(t)
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	leakcheck.Check(t, leakcheck.Options{})
	f, err := startRelayFloor(py)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := f.roundTrip("1+1"); err != nil {
			f.close()
			t.Fatal(err)
		}
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
}
