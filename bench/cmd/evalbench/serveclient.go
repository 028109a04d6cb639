package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
)

// reply is the part of a serve reply line the benchmarks read.
type reply struct {
	Type, ID, Data, Status, Message string
	PID                             int
	At                              time.Time // when the line was read
}

// serveClient drives one `evalhost serve` process over its stdin/stdout.
// It has no reader goroutine: a request waiting for its replies reads the
// next line itself when no other request is reading, and passes lines of
// other requests on to them. A lone request thus reads its replies
// directly, as the floor loop's client does, and the two round trips
// compare like for like.
type serveClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	pid   int
	br    *bufio.Reader

	wmu sync.Mutex // one request line at a time

	reading chan struct{} // holds a token while a request reads br

	mu      sync.Mutex
	waiters map[string]chan reply
	readErr error
}

func startServe(bin, python, home string, maxSessions int) (*serveClient, error) {
	cmd := exec.Command(bin, "serve", "--python", python, "--max-sessions", fmt.Sprint(maxSessions), "--progress", "0")
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = serveAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	br := bufio.NewReaderSize(stdout, 1<<20)
	c := &serveClient{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid, br: br, reading: make(chan struct{}, 1),
		waiters: map[string]chan reply{}}
	hello, err := br.ReadBytes('\n')
	if err != nil || gjson.GetBytes(hello, "type").String() != "hello" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("serve did not say hello: %q %v", hello, err)
	}
	return c, nil
}

// next returns id's next reply, read by this call or passed on by another
// request's; false once the output ended.
func (c *serveClient) next(id string, ch chan reply) (reply, bool) {
	for {
		select {
		case r, ok := <-ch:
			return r, ok
		case c.reading <- struct{}{}:
		}
		// A reply may have been passed on while the token was taken.
		select {
		case r, ok := <-ch:
			<-c.reading
			return r, ok
		default:
		}
		r, ok := c.readLine()
		if !ok {
			<-c.reading
			continue // ch is closed
		}
		if r.ID == id {
			<-c.reading
			return r, true
		}
		// Passed on before the token is given back: given back first, the
		// other request could take it, find its channel still empty, read
		// its own next line and so see its end before its cell_end.
		c.mu.Lock()
		other := c.waiters[r.ID]
		c.mu.Unlock()
		if other != nil {
			other <- r
		}
		<-c.reading
	}
}

// readLine reads one reply line; at the end of the output it closes every
// waiter's channel and returns false.
func (c *serveClient) readLine() (reply, bool) {
	line, err := c.br.ReadBytes('\n')
	if err != nil {
		c.mu.Lock()
		c.readErr = err
		for _, ch := range c.waiters {
			close(ch)
		}
		c.waiters = map[string]chan reply{}
		c.mu.Unlock()
		return reply{}, false
	}
	return parseReply(line), true
}

// parseReply reads a reply line's fields in one pass over its keys, as a
// client decoding into a struct does: looking each field up on its own
// (gjson.GetManyBytes) scanned each line seven times: a warm round trip's
// five lines cost the client 5.1 µs where they now cost 1.8 (hot), time the
// floor's client, reading one line, does not spend.
func parseReply(line []byte) reply {
	var r reply
	var errText string
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			r.Type = v.String()
		case "id":
			r.ID = v.String()
		case "data":
			r.Data = v.String()
		case "status":
			r.Status = v.String()
		case "message":
			r.Message = v.String()
		case "error":
			errText = v.String()
		case "pid":
			r.PID = int(v.Int())
		}
		return true
	})
	r.Message += errText
	r.At = time.Now()
	return r
}

func (c *serveClient) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// evalRequest is an eval request line, encoded from types as a Go client
// of serve would: a map of maps took 1.56 µs to encode, this 0.34 (hot).
type evalRequest struct {
	Op      string     `json:"op"`
	ID      string     `json:"id"`
	Session string     `json:"session"`
	Mode    string     `json:"mode,omitempty"`
	Cells   []evalCell `json:"cells"`
}

type evalCell struct {
	Language string `json:"language"`
	Code     string `json:"code"`
	Timeout  int    `json:"timeout"`
}

// eval sends one eval of one py cell and passes every reply to onReply
// until its end, which it returns with the cell's cell_end.
func (c *serveClient) eval(id, session, mode, code string, onReply func(reply)) (cellEnd, end reply, err error) {
	ch := make(chan reply, 64) // small: a 4096-reply buffer was 400 KB of garbage per request, which the floor's client does not make
	c.mu.Lock()
	if c.readErr != nil {
		c.mu.Unlock()
		return reply{}, reply{}, fmt.Errorf("serve output ended: %w", c.readErr)
	}
	c.waiters[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, id)
		c.mu.Unlock()
	}()
	req := evalRequest{Op: "eval", ID: id, Session: session, Mode: mode,
		Cells: []evalCell{{Language: "py", Code: code, Timeout: 600}}}
	if err := c.send(&req); err != nil {
		return reply{}, reply{}, err
	}
	for {
		r, ok := c.next(id, ch)
		if !ok {
			break
		}
		if onReply != nil {
			onReply(r)
		}
		switch r.Type {
		case "cell_end":
			cellEnd = r
		case "end":
			return cellEnd, r, nil
		case "request_error":
			return cellEnd, r, fmt.Errorf("serve refused %s: %s", id, r.Message)
		}
	}
	return cellEnd, end, fmt.Errorf("serve output ended before the end of %s", id)
}

// close shuts the server down and waits for it.
func (c *serveClient) close() error {
	_ = c.send(map[string]any{"op": "shutdown"})
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		err = <-done
	}
	return err
}
