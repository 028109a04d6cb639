package main

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/tidwall/gjson"
)

// fakeServe answers each eval line with serve's lines for a quick cell,
// started, cell_end and end, written together as serve writes them.
func fakeServe(in io.Reader, out io.WriteCloser) {
	defer out.Close()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		id := gjson.GetBytes(sc.Bytes(), "id").String()
		fmt.Fprintf(out, `{"type":"started","id":%q}`+"\n"+`{"type":"cell_end","id":%q,"status":"ok"}`+"\n"+
			`{"type":"end","id":%q,"status":"ok"}`+"\n", id, id, id)
	}
}

// TestServeClientKeepsEachRequestsOrder: with many requests in flight, each
// gets its own replies in the order serve wrote them, whoever read them. A
// reply passed on after the reading token was given back could arrive after
// the request had read its own end itself (a cell_end lost, the 16-session
// figure failing with "ended , want ok").
func TestServeClientKeepsEachRequestsOrder(t *testing.T) {
	t.Cleanup(leakcheck.Watchdog(t, time.Minute))
	leakcheck.Check(t, leakcheck.Options{})
	reqR, reqW := io.Pipe()
	outR, outW := io.Pipe()
	var served sync.WaitGroup
	served.Add(1)
	go func() { defer served.Done(); fakeServe(reqR, outW) }()
	c := &serveClient{stdin: reqW, br: bufio.NewReader(outR), reading: make(chan struct{}, 1), waiters: map[string]chan reply{}}
	const clients, each = 16, 300
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				cellEnd, end, err := c.eval(fmt.Sprintf("c%d-%d", i, j), "s", "", "1", nil)
				if err == nil && (cellEnd.Type != "cell_end" || cellEnd.Status != "ok" || end.Type != "end") {
					err = fmt.Errorf("request c%d-%d: cell_end %+v, end %+v; want its cell_end before its end", i, j, cellEnd, end)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	reqW.Close()
	served.Wait()
	outR.Close()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestParseReply: the one-pass reader finds each field a figure reads, at
// any place in the line, and nothing from nested objects of the same name.
func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       reply
	}{
		{"started", `{"cell":0,"type":"started","id":"b39"}`, reply{Type: "started", ID: "b39"}},
		{"stdout", `{"cell":0,"type":"stdout","id":"b2","data":"x\ny"}`, reply{Type: "stdout", ID: "b2", Data: "x\ny"}},
		{"cell_end with output", `{"type":"cell_end","id":"b39","status":"ok","output":{"text":"2\n","status":"no","id":"no"}}`,
			reply{Type: "cell_end", ID: "b39", Status: "ok"}},
		{"end first", `{"id":"b1","status":"error","type":"end"}`, reply{Type: "end", ID: "b1", Status: "error"}},
		{"message and error", `{"type":"request_error","id":"b3","message":"bad ","error":"cells"}`,
			reply{Type: "request_error", ID: "b3", Message: "bad cells"}},
		{"pid", `{"type":"interpreter_started","pid":4242,"id":"b4"}`, reply{Type: "interpreter_started", ID: "b4", PID: 4242}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseReply([]byte(tc.line))
			if got.At.IsZero() {
				t.Errorf("At not set")
			}
			got.At = time.Time{}
			if got != tc.want {
				t.Errorf("parseReply(%s) = %+v, want %+v", tc.line, got, tc.want)
			}
		})
	}
}
