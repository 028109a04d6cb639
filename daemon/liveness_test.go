package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/serve"
)

// Short bounds for tests: what they check is what comes in which order,
// never how long it took.
const (
	testProbeAfter = 5 * time.Millisecond
	testAnswerWait = time.Second
)

// fakeHelloPID is the pid the fake process's hello names.
const fakeHelloPID = 4242

// fakeProcess listens on paths' socket as a background process would,
// sends the hello to the one client it accepts, then hands the connection
// to behave, whose done ends when the test does.
func fakeProcess(t *testing.T, behave func(nc net.Conn, done <-chan struct{})) Paths {
	t.Helper()
	paths := PathsFor(t.TempDir())
	if err := ensureDir(paths.Dir); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", paths.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(paths.Socket, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		if err := serve.NewEncoder(nc).Line(serve.Hello{PID: fakeHelloPID, Protocol: serve.Protocol, Type: serve.TypeHello, Version: "test"}); err != nil {
			return
		}
		behave(nc, done)
	}()
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	return paths
}

// dialShort attaches to paths with the test's short bounds.
func dialShort(t *testing.T, paths Paths) *Client {
	t.Helper()
	c, err := Dial(paths)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.live.probeAfter, c.live.answerWait = testProbeAfter, testAnswerWait
	return c
}

// A process silent after its hello is asked whether it lives, and one that
// does not answer is a *HungError naming its pid; one that answers the
// pings is waited for however long it works, and its answers are not
// lines of the client's.
func TestClientFindsAProcessThatStoppedAnswering(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	const pings = 5
	cases := []struct {
		name     string
		behave   func(nc net.Conn, done <-chan struct{})
		send     any // sent before reading, if set
		wantLine string
		wantErr  string // "send" or "next": where the HungError comes
	}{
		{
			name:    "silent after its hello",
			behave:  func(nc net.Conn, _ <-chan struct{}) { drain(nc) },
			wantErr: "next",
		},
		{
			name:     "answers pings only, then a line",
			behave:   func(nc net.Conn, _ <-chan struct{}) { answerPings(nc, pings, `{"type":"end"}`) },
			wantLine: `{"type":"end"}`,
		},
		{
			name: "reads nothing it is sent",
			// It holds the connection open and takes nothing: a line larger
			// than the socket's buffers cannot all go.
			behave:  func(_ net.Conn, done <-chan struct{}) { <-done },
			send:    map[string]string{"op": "eval", "code": strings.Repeat("x", 16<<20)},
			wantErr: "send",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialShort(t, fakeProcess(t, tc.behave))
			var err error
			where := "send"
			if tc.send != nil {
				err = c.Send(tc.send)
			}
			var line []byte
			if err == nil {
				where = "next"
				line, err = c.Next()
			}
			if tc.wantErr == "" {
				if err != nil || string(line) != tc.wantLine {
					t.Fatalf("Next: %q, %v; want %q", line, err, tc.wantLine)
				}
				return
			}
			var hung *HungError
			if where != tc.wantErr || !errors.As(err, &hung) || !hung.Attached || hung.PID != fakeHelloPID || hung.Wait != testAnswerWait {
				t.Fatalf("%s: %v (%#v); want a HungError from %s, attached, naming pid %d", where, err, hung, tc.wantErr, fakeHelloPID)
			}
			for _, want := range []string{"(pid 4242) stopped answering", "kill -CONT 4242", "kill 4242"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
		})
	}
}

// drain reads what the client sends until it leaves, answering nothing.
func drain(nc net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := nc.Read(buf); err != nil {
			return
		}
	}
}

// answerPings answers n of the client's pings with serve's pong and then
// sends last, as a process whose request runs silently and then ends.
func answerPings(nc net.Conn, n int, last string) {
	enc := serve.NewEncoder(nc)
	sc := bufio.NewScanner(nc)
	for i := 0; i < n && sc.Scan(); {
		if gjson.GetBytes(sc.Bytes(), "op").String() == "ping" {
			enc.Line(serve.Pong{ID: gjson.GetBytes(sc.Bytes(), "id").String(), Type: serve.TypePong})
			i++
		}
	}
	nc.Write([]byte(last + "\n"))
	drain(nc)
}

// The background process answers a client's pings while its request is
// queued (its interpreter resolved: a shim's probe can take seconds) and
// while its cell runs, so a request far longer than the bound ends as it
// would without one.
func TestServeAnswersPingsWhileARequestRuns(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	paths, _ := serveHome(t, time.Hour)
	// A version-manager shim is probed when a request names it; this one
	// is slow to answer, and then fails (the request's sh cell needs none).
	shim := filepath.Join(t.TempDir(), "slow-python")
	if err := os.WriteFile(shim, fmt.Appendf(nil, "#!/bin/sh\nsleep %d\nexit 1\n", 2*testAnswerWait/time.Second), 0o755); err != nil {
		t.Fatal(err)
	}
	c := dialShort(t, paths)
	c.Send(map[string]any{"op": "eval", "id": "run", "session": "s", "cwd": filepath.Dir(paths.Dir), "python": shim,
		"cells": []map[string]string{{"language": "sh", "code": "sleep 2; echo done"}}})
	end := readUntil(t, c, "cell_end")
	if st, out := gjson.GetBytes(end, "status").String(), gjson.GetBytes(end, "output.text").String(); st != "ok" || out != "done\n" {
		t.Fatalf("cell_end %s; want ok and done", end)
	}
}

// Stop asked of a process that takes the request but then answers nothing
// says so at once, with how to resume or end it, instead of waiting for
// its lock, which a stopped process never frees.
func TestStopOfAProcessThatStoppedAnswering(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	paths := fakeProcess(t, func(nc net.Conn, _ <-chan struct{}) { drain(nc) })
	c := dialShort(t, paths)
	err := c.stopAndWait(paths, false)
	var hung *HungError
	if !errors.As(err, &hung) || !strings.Contains(err.Error(), "kill -CONT 4242") {
		t.Fatalf("stop: %v; want a HungError saying how to resume pid 4242", err)
	}
}

// A request longer than the process reads is refused before any of it is
// written, saying what to do, and the connection goes on: the next request
// is the first line the process gets. The process used to close the
// connection at the line's end, and the command said only "broken pipe".
func TestSendRefusesALineTooLong(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true})
	lines := make(chan string, 2)
	c := dialShort(t, fakeProcess(t, func(nc net.Conn, _ <-chan struct{}) {
		sc := bufio.NewScanner(nc)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}))
	c.max = 1000
	err := c.Send(map[string]string{"op": "eval", "code": strings.Repeat("\x01", 200)}) // 1,200 bytes escaped
	var long *LineTooLongError
	if !errors.As(err, &long) || long.Max != 1000 || long.Size < 1200 || !strings.Contains(err.Error(), "without a session") {
		t.Fatalf("Send: %v; want a LineTooLongError of over 1200 bytes that says what to do", err)
	}
	if err := c.Send(map[string]string{"op": "eval", "code": strings.Repeat("x", 900)}); err != nil {
		t.Fatal(err)
	}
	c.CloseWrite()
	if got := <-lines; !strings.Contains(got, strings.Repeat("x", 900)) || strings.Contains(got, `\u0001`) {
		t.Fatalf("the process's first line is %.60q…; want the second request alone", got)
	}
}
