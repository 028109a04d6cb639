package mcp

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// stdioPeer drives runStdio over pipes as a client that writes request
// lines and collects the response lines by id.
type stdioPeer struct {
	t    *testing.T
	srv  *Server
	in   *io.PipeWriter
	done chan error
	once sync.Once
	err  error // runStdio's, once finish returned

	mu      sync.Mutex
	got     map[string]string // response line by raw id
	notes   []string          // notification lines, in order
	arrived chan struct{}     // a response came
	ended   chan struct{}     // closed once the output ended (runStdio returned)
}

func newStdioPeer(t *testing.T, fast bool) *stdioPeer {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	home := t.TempDir()
	store := streamsink.NewStore(filepath.Join(home, "artifacts"))
	reg := sessions.New(sessions.Config{Home: home, Sink: streamsink.Options{Store: store}})
	t.Cleanup(func() { reg.Close() })
	srv, err := New(Config{Registry: reg, Store: store, WorkDir: t.TempDir(), Progress: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, srv: srv, in: inW, done: make(chan error, 1), got: map[string]string{},
		arrived: make(chan struct{}, 1), ended: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { p.done <- srv.runStdio(ctx, inR, outW, 0, fast); outW.Close() }()
	go p.collect(outR)
	t.Cleanup(func() {
		cancel() // a test may leave calls running
		if err := p.finish(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			t.Errorf("runStdio = %v", err)
		}
	})
	return p
}

// finish ends the input and returns runStdio's error once it returned.
func (p *stdioPeer) finish() error {
	p.once.Do(func() {
		p.in.Close()
		p.err = <-p.done
	})
	return p.err
}

func (p *stdioPeer) collect(out io.Reader) {
	defer close(p.ended)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		m := gjson.Parse(sc.Text())
		if m.Get("method").Exists() {
			p.mu.Lock()
			p.notes = append(p.notes, sc.Text()) // a notification (progress)
			p.mu.Unlock()
			continue
		}
		p.mu.Lock()
		p.got[m.Get("id").Raw] = sc.Text()
		p.mu.Unlock()
		select {
		case p.arrived <- struct{}{}:
		default:
		}
	}
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// await returns the response with this id (raw JSON).
func (p *stdioPeer) await(id string) string {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		if line, ok := p.answered(id); ok {
			return line
		}
		select {
		case <-p.arrived:
		case <-deadline:
			p.t.Fatalf("no response to %s", id)
		}
	}
}

// answeredByEnd returns the response with this id once the output ended:
// what runStdio wrote before it returned, without waiting for more.
func (p *stdioPeer) answeredByEnd(id string) (string, bool) {
	p.t.Helper()
	if err := p.finish(); err != nil && !errors.Is(err, io.EOF) {
		p.t.Fatalf("runStdio = %v", err)
	}
	<-p.ended
	return p.answered(id)
}

// forget drops the response with this id, so that await waits for the next.
func (p *stdioPeer) forget(id string) {
	p.mu.Lock()
	delete(p.got, id)
	p.mu.Unlock()
}

func (p *stdioPeer) answered(id string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line, ok := p.got[id]
	return line, ok
}

// handshake initializes the session with this protocol version: with
// initialize, or from 2026-07-28 on with server/discover.
func (p *stdioPeer) handshake(version string) {
	p.t.Helper()
	if version >= firstPerRequestProtocol {
		p.send(`{"jsonrpc":"2.0","id":"init","method":"server/discover","params":{"_meta":` + perRequestMeta + `}}`)
		if line := p.await(`"init"`); !strings.Contains(line, `"supportedVersions":["`+version) {
			p.t.Fatalf("server/discover: %s", line)
		}
		return
	}
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if line := p.await(`"init"`); !strings.Contains(line, `"protocolVersion":"`+version+`"`) {
		p.t.Fatalf("initialize: %s", line)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// call sends a tools/call with this id and params and returns its response.
func (p *stdioPeer) call(id int, params string) string {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params))
	return p.await(fmt.Sprint(id))
}

// timings are the parts of a response that differ between two runs of
// the same cell: durations in the status line and in structuredContent.
var timings = regexp.MustCompile(`"durationMs":[0-9.e+-]+|\b[0-9]+(\.[0-9]+)?(ns|µs|ms|s)\]`)

func normalised(line string) string { return timings.ReplaceAllString(line, "T") }

const perRequestMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// The fast path answers every tool call as the SDK does: each call is sent
// once with the fast path on and once with it off, and the responses must
// be equal but for timings. fast says which calls the fast path must take,
// so that the test fails if it silently leaves all of them to the SDK.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	eval := func(args string) string { return `{"name":"eval","arguments":` + args + `}` }
	cases := []struct {
		name, params string
		fast         bool
		want         string // in the response, so that a case tests what it says
	}{
		{"ok cell", eval(`{"session":"a","cells":[{"code":"print('<b> & </b>'); 1+1"}]}`), true, `\u003cb\u003e \u0026 \u003c/b\u003e\n2"`}, // HTML-escaped, as the SDK's encoder does
		{"error cell", eval(`{"session":"a","cells":[{"code":"1/0"},{"code":"2"}]}`), true, "ZeroDivisionError"},
		{"shell cell", eval(`{"session":"a","cells":[{"code":"echo hi","language":"sh"}]}`), true, `\nhi"`},
		{"malformed arguments", eval(`{"session":"a","cells":"1+1"}`), true, "cells must be an array"},
		{"arguments not an object", eval(`5`), true, "arguments must be an object"},
		{"no arguments", `{"name":"eval"}`, true, "cells is required"},
		{"unknown session option", eval(`{"sesion":"a","cells":[{"code":"1"}]}`), true, `has no field \"sesion\"`},
		{"timeout", eval(`{"session":"t","cells":[{"code":"x = 41\nimport time; time.sleep(30)","timeout":0.2}]}`), true, "timeout: stopped"},
		{"state kept after the timeout", eval(`{"session":"t","cells":[{"code":"x+1"}]}`), true, `\n42"`},
		{"image output", eval(`{"session":"a","cells":[{"code":"import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 1), dpi=50)\nplt.plot([1, 2])\nplt.show()"}]}`), true, `"type":"image"`},
		{"reset tool", `{"name":"reset","arguments":{"session":"nope"}}`, true, "nothing was reset"},
		{"progress token", `{"name":"eval","arguments":{"session":"a","cells":[{"code":"import time; time.sleep(0.2); 3"}]},"_meta":{"progressToken":"p1"}}`, false, `\n3"`},
		{"unknown tool", `{"name":"nope","arguments":{}}`, false, `unknown tool`},
		{"escaped key", `{"n\u0061me":"eval","arguments":{"cells":[{"code":"4"}]}}`, false, `\n4"`},
		{"escaped name", `{"name":"ev\u0061l","arguments":{"cells":[{"code":"8"}]}}`, false, `\n8"`},
		{"per-request protocol, first", `{"name":"eval","arguments":{"session":"a","cells":[{"code":"5"}]},"_meta":` + perRequestMeta + `}`, false, "serverInfo"},
		{"per-request protocol, seen", `{"name":"eval","arguments":{"session":"a","cells":[{"code":"6"}]},"_meta":` + perRequestMeta + `}`, true, "serverInfo"},
		{"per-request protocol unknown", `{"name":"eval","arguments":{"cells":[{"code":"7"}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`, false, "unsupported protocol version"},
	}
	// 2026-07-28 sessions get results marked resultType "complete".
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		answers := map[bool][]string{}
		took := make([]bool, len(cases))
		for _, fast := range []bool{false, true} {
			p := newStdioPeer(t, fast)
			p.handshake(version)
			for i, tc := range cases {
				before := p.srv.fastCalls.Load()
				answers[fast] = append(answers[fast], normalised(p.call(i+1, tc.params)))
				if fast {
					took[i] = p.srv.fastCalls.Load() > before
				}
			}
			if !fast && p.srv.fastCalls.Load() != 0 {
				t.Fatalf("%d calls took the fast path with it off", p.srv.fastCalls.Load())
			}
		}
		for i, tc := range cases {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				if strings.Contains(tc.params, "import matplotlib") { // the session's python3 may lack it (sid's 3.15)
					testkit.NeedModuleIn(t, "python3", "matplotlib", "matplotlib")
				}
				if !strings.Contains(answers[false][i], tc.want) {
					t.Errorf("the SDK's answer lacks %s: %s", tc.want, answers[false][i])
				}
				if took[i] != tc.fast {
					t.Errorf("fast path taken: %v, want %v", took[i], tc.fast)
				}
				if sdk, fast := answers[false][i], answers[true][i]; sdk != fast {
					t.Errorf("responses differ\nSDK:  %s\nfast: %s", sdk, fast)
				}
			})
		}
	}
}

// startedCall sends a fast eval in session that writes a marker file and
// sleeps, and returns once the cell runs.
func (p *stdioPeer) startedCall(id int, session string) {
	p.t.Helper()
	marker := filepath.Join(p.t.TempDir(), "running")
	// The marker is made from a thread once the cell sleeps: made before
	// the sleep, a cancel sent as it appeared could land in open() and
	// give the two paths' tracebacks different lines.
	code := fmt.Sprintf("import threading, time\nthreading.Timer(0.2, lambda: open(%q, 'w').close()).start()\ntime.sleep(300)", marker)
	args, _ := json.Marshal(map[string]any{"session": session, "cells": []any{map[string]any{"code": code}}})
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"eval","arguments":%s}}`, id, args))
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("call %d's cell never started", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *stdioPeer) cancel(id int) {
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`, id))
}

// A cancel of a fast call interrupts its cell, and the session keeps its
// state, as for a call the SDK runs. The cancel is read as the SDK reads
// it: here in a line that is not a plainRequest (an extra key, which the
// SDK ignores), naming the id as 2.0.
func TestFastPathCancelInterrupts(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{})
	p := newStdioPeer(t, true)
	p.handshake("2025-11-25")
	p.call(1, `{"name":"eval","arguments":{"session":"c","cells":[{"code":"x = 41"}]}}`)
	p.startedCall(2, "c")
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2.0},"extra":true}`)
	if line := p.await("2"); !strings.Contains(line, `"status":"cancelled"`) || !strings.Contains(line, "KeyboardInterrupt") {
		t.Fatalf("cancelled call answered %s; want status cancelled after a KeyboardInterrupt", line)
	}
	if line := p.call(3, `{"name":"eval","arguments":{"session":"c","cells":[{"code":"x+1"}]}}`); !strings.Contains(line, `\n42"`) {
		t.Fatalf("after the cancel: %s; want 42 (state kept)", line)
	}
	if n := p.srv.fastCalls.Load(); n != 3 {
		t.Fatalf("%d calls took the fast path; want all 3", n)
	}
}

// While a fast call's cell runs, the next requests are read and answered:
// one for the SDK (tools/list) and a fast eval in another session. The
// input's end waits for the answers of the calls running, the cancelled
// one's included.
func TestFastPathReadsOnDuringACall(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{})
	p := newStdioPeer(t, true)
	p.handshake("2025-11-25")
	p.startedCall(1, "slow")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if line := p.await("2"); !strings.Contains(line, `"name":"eval"`) {
		t.Fatalf("tools/list: %s", line)
	}
	if line := p.call(3, `{"name":"eval","arguments":{"session":"other","cells":[{"code":"1+1"}]}}`); !strings.Contains(line, `\n2"`) {
		t.Fatalf("eval in another session: %s", line)
	}
	if line, ok := p.answered("1"); ok {
		t.Fatalf("the sleeping call was answered: %s", line)
	}
	p.cancel(1)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"eval","arguments":{"session":"other","cells":[{"code":"import time; time.sleep(0.2); 6*7"}]}}}`)
	// The input ends with call 4 running and call 1's cancel under way:
	// both were read, so both are answered before runStdio returns.
	if line, ok := p.answeredByEnd("4"); !ok || !strings.Contains(line, `\n42"`) {
		t.Fatalf("the call read before the input's end: %q (answered %v); want 42", line, ok)
	}
	if line, ok := p.answeredByEnd("1"); !ok || !strings.Contains(line, `"status":"cancelled"`) {
		t.Fatalf("the cancelled call: %q (answered %v); want status cancelled", line, ok)
	}
	if n := p.srv.fastCalls.Load(); n != 3 {
		t.Fatalf("%d calls took the fast path; want 3", n)
	}
}

// A client that writes its requests and closes its input at once (echo
// '…' | evalhost mcp) gets every answer before the server ends: the end
// of input waits until each answer is written, not only noted, for the
// fast path's calls and the SDK's requests alike. Many quick calls end
// together, so that the last answer races the end in every round.
func TestStdioEndAnswersEveryRequestRead(t *testing.T) {
	for round := range 10 {
		p := newStdioPeer(t, true)
		p.handshake("2025-11-25")
		var batch strings.Builder
		for id := range 40 {
			if id%4 == 3 {
				fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", id)
				continue
			}
			fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sessions","arguments":{}}}`+"\n", id)
		}
		if _, err := io.WriteString(p.in, batch.String()); err != nil {
			t.Fatal(err)
		}
		for id := range 40 {
			if line, ok := p.answeredByEnd(fmt.Sprint(id)); !ok || strings.Contains(line, `"error"`) {
				t.Fatalf("round %d: request %d read before the input's end: %q (answered %v)", round, id, line, ok)
			}
		}
		if p.srv.fastCalls.Load() != 30 {
			t.Fatalf("round %d: %d calls took the fast path; want 30", round, p.srv.fastCalls.Load())
		}
	}
}

// The SDK's own Go client's calls take the fast path, on the protocol it
// speaks by default (2026-07-28, protocol fields in every call's _meta)
// and on the one most clients speak (2025-11-25); only the first call
// with new _meta goes to the SDK.
func TestFastPathTakesTheSDKClientsCalls(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+cmp.Or(version, "default"), func(t *testing.T) {
			srv := newTestServer(t)
			cr, cw := io.Pipe()
			sr, sw := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- srv.RunStdio(context.Background(), cr, sw, 0); sw.Close() }()
			client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
			session, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: sr, Writer: cw}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "eval",
					Arguments: map[string]any{"cells": []any{map[string]any{"code": fmt.Sprintf("%d*7", i+5)}}}})
				if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, fmt.Sprint((i+5)*7)) {
					t.Fatalf("call %d: %v %+v", i, err, res)
				}
			}
			session.Close()
			<-done
			want := int64(3)
			if version == "" {
				want = 2
			}
			if n := srv.fastCalls.Load(); n != want {
				t.Fatalf("%d of 3 calls took the fast path; want %d", n, want)
			}
		})
	}
}

// A request with the id of a call still running, fast or on the SDK, is
// answered with an error saying so (the SDK alone drops it unanswered),
// alike with the fast path on and off; the running call is answered as
// before, and the input's end waits for nothing more.
func TestDuplicateIDIsRefused(t *testing.T) {
	const want = `{"jsonrpc":"2.0","id":%[1]s,"error":{"code":-32600,"message":"request id %[1]s is already in use by a running request; use a new id"}}`
	answers := map[bool][]string{}
	for _, fast := range []bool{false, true} {
		p := newStdioPeer(t, fast)
		p.handshake("2025-11-25")
		p.startedCall(1, "d")
		for _, dup := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"eval","arguments":{"session":"e","cells":[{"code":"1"}]}}}`,
			`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
		} {
			p.send(dup)
			id := gjson.Get(dup, "id").Raw
			line := p.await(id)
			p.forget(id)
			if want := fmt.Sprintf(want, id); line != want {
				t.Fatalf("fast path on: %v; the duplicate %s was answered %s, want %s", fast, dup, line, want)
			}
			answers[fast] = append(answers[fast], line)
		}
		p.cancel(1)
		answers[fast] = append(answers[fast], normalised(p.await("1")))
		if want := map[bool]int64{false: 0, true: 1}[fast]; p.srv.fastCalls.Load() != want {
			t.Fatalf("fast path on: %v; %d calls took it, want %d", fast, p.srv.fastCalls.Load(), want)
		}
		if err := p.finish(); err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("runStdio = %v", err)
		}
	}
	for i := range answers[false] {
		if sdk, fast := answers[false][i], answers[true][i]; sdk != fast {
			t.Errorf("responses differ\nSDK:  %s\nfast: %s", sdk, fast)
		}
	}
}

// callParams may only take params the SDK reads the same: the same tool
// name and the same arguments, byte for byte. The params come from a
// plainRequest line, so they are valid UTF-8.
func FuzzCallParams(f *testing.F) {
	for _, p := range []string{`{"name":"eval","arguments":{"cells":[{"code":"1+1"}]}}`, `{"name":"e\u0076al"}`,
		`{"arguments":5,"name":"x","_meta":{"a":1}}`, `{"name":"a","Name":"b"}`, `{"name":"a","name":"b"}`, `[]`,
		`{"name":"\ud800"}`, `{"name":"\ud83d\ude00x"}`, `{"name":"\udc00\ud800"}`} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, params string) {
		if !json.Valid([]byte(params)) || !utf8.ValidString(params) {
			return
		}
		tc, ok := callParams(gjson.Parse(params))
		if !ok {
			return
		}
		var sdkParams sdk.CallToolParamsRaw
		if err := json.Unmarshal([]byte(params), &sdkParams); err != nil {
			t.Fatalf("callParams takes %s, which the SDK refuses: %v", params, err)
		}
		if sdkParams.Name != tc.name || string(sdkParams.Arguments) != string(tc.args) {
			t.Fatalf("%s: callParams reads %q %s, the SDK %q %s", params, tc.name, tc.args, sdkParams.Name, sdkParams.Arguments)
		}
	})
}
