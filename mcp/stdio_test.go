package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/evalhost/evalhost/sessions"
)

func TestLineGuard(t *testing.T) {
	const a, b, ok = `{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`, `{"jsonrpc":"2.0","method":"ok"}`
	long := strings.Repeat("x", 100)
	numReq := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"` + long + `"}`
	strReq := `{"id":"r-1","method":"x","params":"` + long + `"}`
	idLast := `{"method":"tools/call","params":"` + long + `","jsonrpc":"2.0","id":9}`
	strIDLast := `{"method":"x","params":{"a":["` + long + `"]},"id":"r-2"}`
	escaped := `{"method":"x","params":"\\\"}` + long + `\\","id":10}`
	twoIDs := `{"id":1,"method":"x","params":"` + long + `","id":"b"}`
	tooLong := func(id, line string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"evalhost/line_too_long","params":{"bytes":%d,"max":64}}`+"\n", id, len(line)+1)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short lines pass", a + "\n" + b + "\n", a + "\n" + b + "\n"},
		{"last line without newline", a + "\n" + b, a + "\n" + b},
		{"exactly max", `{"jsonrpc":"2.0","method":"` + strings.Repeat("y", 33) + "\"}\n", `{"jsonrpc":"2.0","method":"` + strings.Repeat("y", 33) + "\"}\n"},
		{"long request with a number id", numReq + "\n" + ok + "\n", fmt.Sprintf(
			`{"jsonrpc":"2.0","id":7,"method":"evalhost/line_too_long","params":{"bytes":%d,"max":64}}`+"\n"+ok+"\n", len(numReq)+1)},
		{"long request with a string id", strReq + "\n", fmt.Sprintf(
			`{"jsonrpc":"2.0","id":"r-1","method":"evalhost/line_too_long","params":{"bytes":%d,"max":64}}`+"\n", len(strReq)+1)},
		{"long notification is dropped", `{"method":"notifications/x","params":"` + long + "\"}\n" + ok + "\n", ok + "\n"},
		{"long response is dropped", `{"id":3,"result":"` + long + "\"}\n" + ok + "\n", ok + "\n"},
		// The TypeScript SDK writes a request's id after its params
		// ({...request, jsonrpc, id}): the id is read wherever it is.
		{"long request with its id last", idLast + "\n", tooLong("9", idLast)},
		{"long request with a string id last", strIDLast + "\n", tooLong(`"r-2"`, strIDLast)},
		{"escapes before the id", escaped + "\n", tooLong("10", escaped)},
		{"the last id counts, as the SDK reads it", twoIDs + "\n", tooLong(`"b"`, twoIDs)},
		{"an id in params is not the request's", `{"method":"x","params":{"id":5,"s":"` + long + `"}}` + "\n", ""},
		{"an id in a string is not the request's", `{"method":"x","params":"\",\"id\":5,` + long + `"}` + "\n", ""},
		{"a null id last is no id", `{"method":"x","params":"` + long + `","id":null}` + "\n", ""},
		{"a long response with its id last is dropped", `{"result":"` + long + `","jsonrpc":"2.0","id":3}` + "\n" + ok + "\n", ok + "\n"},
		{"a long batch is dropped", `[{"jsonrpc":"2.0","id":4,"method":"x","params":"` + long + `"}]` + "\n" + ok + "\n", ok + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var answers strings.Builder
			g := &lineGuard{r: newSmallReader(tc.in), max: 64, answer: &answers}
			got, err := io.ReadAll(g)
			if err != nil || string(got) != tc.want || answers.Len() > 0 {
				t.Fatalf("got %q (%v), answered %q\nwant %q", got, err, answers.String(), tc.want)
			}
		})
	}
}

// A line that is not a JSON-RPC message is answered with an error and
// dropped, and the lines after it go on: the SDK ended the connection, and
// every session with it, at the first such line.
func TestLineGuardAnswersMalformedLines(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		name, line, want string
	}{
		{"not JSON", "not json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error`},
		{"two values", "{}{}", `"code":-32700`},
		{"cut short", `{"jsonrpc":"2.0","id":4,"method":`, `"code":-32700`},
		{"empty batch", "[]", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"bad batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"},3]`, `"code":-32600`},
		{"a batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, `"code":-32600,"message":"invalid request: JSON-RPC batches are not supported`},
		{"no version", `{"id":5,"method":"ping"}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: invalid message version tag`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `"id":null,"error":{"code":-32600`},
		{"a number", "42", `"code":-32600`},
		{"a bad response", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, ""},
		{"a notification without version", `{"method":"notifications/initialized"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var answers strings.Builder
			g := &lineGuard{r: newSmallReader(tc.line + "\n" + ok + "\n"), max: 1 << 10, answer: &answers}
			got, err := io.ReadAll(g)
			if err != nil || string(got) != ok+"\n" {
				t.Fatalf("passed on %q (%v); want only the good line", got, err)
			}
			if tc.want == "" && answers.Len() > 0 {
				t.Fatalf("answered %q; a response or a notification is never answered", answers.String())
			}
			if tc.want != "" && (!strings.Contains(answers.String(), tc.want) || strings.Count(answers.String(), "\n") != 1) {
				t.Fatalf("answered %q; want one line with %q", answers.String(), tc.want)
			}
		})
	}
}

// deepRequest is a ping whose params nest so that the whole message is
// depth deep.
func deepRequest(id string, depth int) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

// JSON nested deeper than the SDK reads (1000 levels) is still JSON (RFC
// 8259 lets a parser bound the depth): however deep, even past
// encoding/json's bound (10000), it is an invalid request answered under
// its id, which a Go SDK client takes as its call's error (an id-null
// error ends that client's connection). What is not JSON is a parse error.
func TestLineGuardSaysTooDeep(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	const tooDeep = `"error":{"code":-32600,"message":"invalid request: the message nests arrays and objects more than 1000 deep`
	for _, tc := range []struct {
		name, line, want string
	}{
		{"one too deep", deepRequest("7", maxDepth+1), `{"jsonrpc":"2.0","id":7,` + tooDeep},
		{"deeper than encoding/json reads", deepRequest(`"s"`, 200_000), `{"jsonrpc":"2.0","id":"s",` + tooDeep},
		{"id after the depth", `{"jsonrpc":"2.0","method":"ping","params":` + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + `,"id":8}`,
			`{"jsonrpc":"2.0","id":8,` + tooDeep},
		{"deep and cut short", strings.Repeat(`{"a":`, 20_000), `{"jsonrpc":"2.0","id":null,` + tooDeep},
		{"deep response", `{"jsonrpc":"2.0","id":3,"result":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`, ""},
		// A notification is never answered: an id-null error ends a Go SDK
		// client's connection, and there is no call to fail.
		{"deep notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}`, ""},
		{"deep notification, id null", `{"jsonrpc":"2.0","id":null,"method":"notifications/progress","params":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`, ""},
		{"shallow and cut short", strings.Repeat(`{"a":`, 20), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not one JSON value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var answers strings.Builder
			g := &lineGuard{r: newSmallReader(tc.line + "\n" + ok + "\n"), max: 1 << 20, answer: &answers}
			got, err := io.ReadAll(g)
			if err != nil || string(got) != ok+"\n" {
				t.Fatalf("passed on %.100q (%v); want only the good line", got, err)
			}
			if tc.want == "" && answers.Len() > 0 {
				t.Fatalf("answered %q; a response or a notification is never answered", answers.String())
			}
			if tc.want != "" && (!strings.Contains(answers.String(), tc.want) || strings.Count(answers.String(), "\n") != 1) {
				t.Fatalf("answered %.300q; want one line with %q", answers.String(), tc.want)
			}
		})
	}
}

// maxDepth is the SDK's bound, and brackets in strings do not count
// towards it: the guard passes on exactly what the SDK decodes.
func TestMaxDepthIsTheSDKs(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		deep bool
	}{
		{"at the bound", deepRequest("1", maxDepth), false},
		{"one over", deepRequest("1", maxDepth+1), true},
		{"brackets in a string", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"` + strings.Repeat(`[{\"`, 2000) + `"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jsonrpc.DecodeMessage([]byte(tc.line))
			if (err != nil) != tc.deep {
				t.Fatalf("the SDK's decoder: %v; want an error: %v", err, tc.deep)
			}
			if got := nestsDeeper([]byte(tc.line), maxDepth); got != tc.deep {
				t.Fatalf("nestsDeeper = %v, want %v", got, tc.deep)
			}
			if reply, _ := checkMessage([]byte(tc.line)); (reply != nil) != tc.deep {
				t.Fatalf("checkMessage answered %.200q; want an answer: %v", reply, tc.deep)
			}
		})
	}
}

// newSmallReader hands out a few bytes per read into a small buffer, so
// lines span reads and buffer fills.
func newSmallReader(s string) *bufio.Reader {
	return bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(s)), 16)
}

// Through RunStdio: after a line that is no JSON-RPC message the client
// gets an error and the connection serves on.
func TestRunStdioSurvivesMalformedLines(t *testing.T) {
	srv, err := New(Config{Registry: sessions.New(sessions.Config{Home: t.TempDir()}), WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.cfg.Registry.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.RunStdio(context.Background(), inR, outW, 0) }()
	out := bufio.NewReader(outR)
	go func() {
		io.WriteString(inW, "not json\n[]\n"+`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	}()
	for i, want := range []string{`"code":-32700`, `"code":-32600`, `"id":1,"result":{`} {
		line, err := out.ReadString('\n')
		if err != nil || !strings.Contains(line, want) {
			t.Fatalf("line %d: %q (%v); want one with %s", i, line, err, want)
		}
	}
	inW.Close()
	if err := <-done; err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("RunStdio = %v", err)
	}
	outW.Close()
}

// Requests written before stdin ends are answered before the connection
// ends: the SDK ended it at EOF and cancelled the calls, so
// "echo '…' | evalhost mcp" got no answer to its eval.
func TestRunStdioAnswersBeforeEOF(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
	srv := newTestServer(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"import time; time.sleep(0.3); print(6*7)"}]}}}
{"jsonrpc":"2.0","id":"three","method":"ping"}
`
	var out strings.Builder
	if err := srv.RunStdio(context.Background(), strings.NewReader(in), nopCloser{&out}, 0); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("RunStdio = %v", err)
	}
	for _, want := range []string{`"id":1,"result"`, `"id":2,"result"`, `42`, `"id":"three","result"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// A cancelled ctx is how a requested shutdown (SIGTERM) ends the server:
// RunStdio returns ctx's error and logs no error, as the SDK's Run did
// ("server run cancelled" at level ERROR).
func TestRunStdioCancelIsNotAnError(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := sessions.New(sessions.Config{Home: t.TempDir()})
	defer reg.Close()
	srv, err := New(Config{Registry: reg, WorkDir: t.TempDir(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	defer outW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.RunStdio(ctx, inR, outW, 0) }()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if line, err := bufio.NewReader(outR).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize answered %q (%v)", line, err)
	}
	go io.Copy(io.Discard, outR)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunStdio = %v; want context.Canceled", err)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("a cancelled run logged an error:\n%s", logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the SDK's goroutines to log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// plainRequest may only take what the SDK's decoder takes: a line it
// passes and the decoder refuses would end the connection.
var plainRequestCases = []struct {
	name, line string
	plain      bool
}{
	{"call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"1+1"}]}}}`, true},
	{"string id", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, true},
	{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, true},
	{"spaced", `{ "method" : "ping" , "jsonrpc" : "2.0" }`, true},
	{"huge id", `{"jsonrpc":"2.0","id":1e999,"method":"ping"}`, false},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, false},
	{"old version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, false},
	{"numeric version", `{"jsonrpc":2,"id":1,"method":"ping"}`, false},
	{"no version", `{"id":1,"method":"ping"}`, false},
	{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, false},
	{"duplicate key", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}`, false},
	{"escaped key", `{"jsonrpc":"2.0","i\u0064":1,"method":"ping"}`, false},
	{"other key", `{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`, false},
	{"upper-case key", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, false},
	{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, false},
	{"not an object", `"ping"`, false},
	{"bad utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", false},
	{"deep", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, false},
}

func TestPlainRequest(t *testing.T) {
	for _, tc := range plainRequestCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := plainRequest([]byte(tc.line)); got != tc.plain {
				t.Fatalf("plainRequest(%s) = %v, want %v", tc.line, got, tc.plain)
			}
			if _, err := jsonrpc.DecodeMessage([]byte(tc.line)); tc.plain && err != nil {
				t.Fatalf("plain, but the SDK refuses it: %v", err)
			}
		})
	}
}

func FuzzPlainRequest(f *testing.F) {
	for _, tc := range plainRequestCases {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		msg := []byte(strings.TrimSpace(line))
		if len(msg) == 0 || !json.Valid(msg) || !plainRequest(msg) {
			return
		}
		if _, err := jsonrpc.DecodeMessage(msg); err != nil {
			t.Fatalf("plainRequest takes %q, which the SDK refuses: %v", msg, err)
		}
	})
}

func BenchmarkCheckMessage(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"1+1"}],"session":"bench"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if reply, plain := checkMessage(line); reply != nil || !plain {
			b.Fatal("a plain request refused")
		}
	}
}

// countingCloser records what reaches it, and how often it was closed.
type countingCloser struct {
	bytes.Buffer
	closes int
}

func (c *countingCloser) Close() error { c.closes++; return nil }

// A write after the output was closed (a cancelled call ending after a
// signal) fails and never reaches the closed output; Close is safe twice.
func TestLockedWriterAfterClose(t *testing.T) {
	out := &countingCloser{}
	lw := &lockedWriter{w: out}
	if _, err := lw.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lw.Close(); err != nil || out.closes != 1 {
		t.Fatalf("second Close = %v, output closed %d times; want nil, once", err, out.closes)
	}
	if n, err := lw.Write([]byte("b\n")); n != 0 || !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("Write after Close = %d, %v; want 0, io.ErrClosedPipe", n, err)
	}
	if out.String() != "a\n" {
		t.Fatalf("output %q; want only what was written before Close", out.String())
	}
}

// The write of the guard's own answer (a parse error's) is reported to
// replied, a failed one too: an answer lost there is lost as any other
// (mcp exited 0 when the client had closed its end before the answer).
func TestGuardReportsItsAnswersWrites(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		name   string
		answer io.Writer
		failed bool
	}{
		{"written", io.Discard, false},
		{"the write failed", failingWriter{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var told []error
			g := &lineGuard{r: newSmallReader("not json\n" + ok + "\n"), max: 1 << 10, answer: tc.answer,
				replied: func(err error) { told = append(told, err) }}
			_, _ = io.ReadAll(g)
			if len(told) != 1 || (told[0] != nil) != tc.failed {
				t.Fatalf("replied told %v; want one report, failed %v", told, tc.failed)
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }
