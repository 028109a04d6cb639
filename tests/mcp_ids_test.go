package tests

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// idAnswer is a response a case wants: its id as the server writes it and
// a piece of its text.
type idAnswer struct{ id, text string }

// Whatever ids a client sends, `evalhost mcp` answers every request that
// has an id and ends once its stdin ends: a request the SDK would answer
// under another id (1.5 as 1), or drop (a duplicate id, a null id), is
// answered with an error saying what was wrong, and nothing is left for
// the end of input to wait for.
func TestMCPStdioEndsAtEOFWhateverTheIDs(t *testing.T) {
	const (
		// sessions is a fast-path call that needs no interpreter.
		sessions = `"method":"tools/call","params":{"name":"sessions","arguments":{}}`
		ping     = `"method":"ping"`
		// slow runs long enough for the lines after it to find it running;
		// slowSDK is the same call in a shape the fast path leaves to the SDK.
		slow    = `"method":"tools/call","params":{"name":"eval","arguments":{"session":"s","cells":[{"code":"import time; time.sleep(2)"}]}}`
		slowSDK = `"method":"tools/call","params":{"n\u0061me":"eval","arguments":{"session":"s","cells":[{"code":"import time; time.sleep(2)"}]}}`
		long    = `"method":"tools/call","params":{"name":"eval","arguments":{"session":"l","cells":[{"code":"import time; time.sleep(300)"}]}}`
		longSDK = `"method":"tools/call","params":{"n\u0061me":"eval","arguments":{"session":"m","cells":[{"code":"import time; time.sleep(300)"}]}}`
	)
	msg := func(id, rest string) string {
		if id == "" {
			return `{"jsonrpc":"2.0",` + rest + `}`
		}
		return `{"jsonrpc":"2.0","id":` + id + `,` + rest + `}`
	}
	cancel := func(id string) string {
		return msg("", `"method":"notifications/cancelled","params":{"requestId":`+id+`}`)
	}
	const (
		notInteger = "is not an integer; use an integer or a string id"
		tooLarge   = "is larger than 9007199254740991, the largest integer id this server echoes exactly"
		inUse      = "is already in use by a running request; use a new id"
		nullID     = "request id null is not allowed"
	)
	cases := []struct {
		name  string
		lines []string
		want  []idAnswer
	}{
		{"fractional ids", []string{msg("1.5", sessions), msg("2.5", ping), msg("25e-1", ping)},
			[]idAnswer{{"1.5", "request id 1.5 " + notInteger}, {"2.5", "request id 2.5 " + notInteger}, {"25e-1", notInteger}}},
		{"integers spelled otherwise", []string{msg("1e0", sessions), msg("2.0", ping), msg("-3", ping), msg("-4", sessions), msg("0", ping)},
			[]idAnswer{{"1", `"result"`}, {"2", `"result"`}, {"-3", `"result"`}, {"-4", `"result"`}, {"0", `"result"`}}},
		{"huge numbers", []string{msg("1e30", ping), msg("-1e30", sessions), msg("9007199254740993", sessions), msg("9223372036854775807", ping)},
			[]idAnswer{{"1e30", tooLarge}, {"-1e30", tooLarge}, {"9007199254740993", tooLarge}, {"9223372036854775807", tooLarge}}},
		{"null ids", []string{msg("null", sessions), msg("null", ping), msg("null", `"method":"notifications/initialized"`)},
			[]idAnswer{{"null", nullID}, {"null", nullID}}},
		{"a string and a number are two ids", []string{msg(`"9"`, slow), msg("9", slowSDK), msg(`"9"`, ping), msg("9", ping)},
			[]idAnswer{{`"9"`, `"result"`}, {"9", `"result"`}, {`"9"`, `request id \"9\" ` + inUse}, {"9", "request id 9 " + inUse}}},
		{"a duplicate of a fast call", []string{msg("7", slow), msg("7", sessions), msg("7", ping)},
			[]idAnswer{{"7", `"result"`}, {"7", inUse}, {"7", inUse}}},
		{"a duplicate of an SDK call", []string{msg("8", slowSDK), msg("8", sessions), msg("8", ping)},
			[]idAnswer{{"8", `"result"`}, {"8", inUse}, {"8", inUse}}},
		{"a duplicate spelled otherwise", []string{msg("10", slow), msg("10.0", ping), msg("1e1", sessions)},
			[]idAnswer{{"10", `"result"`}, {"10.0", "request id 10.0 " + inUse}, {"1e1", "request id 1e1 " + inUse}}},
		{"ids on notifications", []string{msg("11", `"method":"notifications/initialized"`), msg("12", `"method":"notifications/cancelled","params":{"requestId":99}`)},
			[]idAnswer{{"11", "unexpected id"}, {"12", "unexpected id"}}},
		{"a batch", []string{`[` + msg("13", ping) + `]`}, []idAnswer{{"null", "batches are not supported"}}},
		{"cancelled calls", []string{msg("14", long), msg("15", longSDK), cancel("14"), cancel("15")},
			[]idAnswer{{"14", ""}, {"15", ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			answers := runMCPToEOF(t, tc.lines)
			for _, w := range tc.want {
				i := matchAnswer(answers, w)
				if i < 0 {
					t.Errorf("no answer with id %s containing %s; answers:\n%s", w.id, w.text, strings.Join(answers, "\n"))
					continue
				}
				answers = append(answers[:i], answers[i+1:]...)
			}
		})
	}
}

// mcpInitLines open an MCP session: initialize (answered with id "init")
// and the initialized notification.
const mcpInitLines = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// startMCPPiped starts `evalhost mcp` with pipes to its stdin and stdout.
func startMCPPiped(t *testing.T) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	return startPiped(t, "mcp")
}

// startPiped starts evalhost with args and pipes to its stdin and stdout.
func startPiped(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	cmd := command(t, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout
}

// runMCPToEOF initializes an `evalhost mcp`, writes lines, closes its stdin
// and returns the responses it wrote (but the initialize's) once it exited.
func runMCPToEOF(t *testing.T, lines []string) []string {
	t.Helper()
	cmd, stdin, stdout := startMCPPiped(t)
	got := make(chan string, 100)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
		exited <- cmd.Wait()
	}()
	if _, err := io.WriteString(stdin, mcpInitLines+strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	var answers []string
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-got:
			if !ok {
				got = make(chan string) // drained; closed below
				close(got)
				continue
			}
			if m := gjson.Parse(line); !m.Get("method").Exists() && m.Get("id").Raw != `"init"` {
				answers = append(answers, line)
			}
		case err := <-exited:
			if err != nil {
				t.Errorf("evalhost mcp: %v", err)
			}
			for line := range got { // closed before exited is sent (nil: drained)
				if m := gjson.Parse(line); !m.Get("method").Exists() && m.Get("id").Raw != `"init"` {
					answers = append(answers, line)
				}
			}
			return answers
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("evalhost mcp did not end within 30 s of its stdin's end; answers so far:\n%s", strings.Join(answers, "\n"))
		}
	}
}

// matchAnswer is the index of the answer with w's id that contains w's
// text, or -1.
func matchAnswer(answers []string, w idAnswer) int {
	for i, a := range answers {
		if gjson.Get(a, "id").Raw == w.id && strings.Contains(a, w.text) {
			return i
		}
	}
	return -1
}

// A client that dies (both its pipes close) has its calls cancelled at
// once, their processes with them, not left running to their timeout: the
// end of stdin waits for answers only while someone can read them.
func TestMCPClientGoneCancelsItsCalls(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid") // a FIFO: its read waits for the cell
	if err := syscall.Mkfifo(pidFile, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, stdin, stdout := startMCPPiped(t)
	defer cmd.Process.Kill()
	code := "import subprocess, time\np = subprocess.Popen(['sleep', '600'])\nopen(" + strconv.Quote(pidFile) + ", 'w').write(str(p.pid))\nprint('started', flush=True)\nwhile True: time.sleep(1)"
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "eval", "arguments": map[string]any{"session": "d", "cells": []any{map[string]any{"code": code, "timeout": 600}}}}})
	if _, err := io.WriteString(stdin, mcpInitLines+string(call)+"\n"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() { // the initialize's answer
		t.Fatal("no answer to initialize")
	}
	b, err := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(string(b))
	if err != nil || pid <= 0 {
		t.Fatalf("the cell's child pid %q (%v)", b, err)
	}
	stdin.Close()
	stdout.Close() // the client is gone
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(60 * time.Second): // the cell's timeout is 600 s
		t.Fatal("evalhost mcp still runs the dead client's call")
	}
	if !leakcheck.Gone(pid, hangBound) {
		t.Errorf("the cell's child %d outlived the call", pid)
	}
}
