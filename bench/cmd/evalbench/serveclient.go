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
type serveClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	pid   int

	wmu sync.Mutex // one request line at a time

	mu      sync.Mutex
	waiters map[string]chan reply
	readErr error

	wg sync.WaitGroup // the reader
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
	c := &serveClient{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid, waiters: map[string]chan reply{}}
	br := bufio.NewReaderSize(stdout, 1<<20)
	hello, err := br.ReadBytes('\n')
	if err != nil || gjson.GetBytes(hello, "type").String() != "hello" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("serve did not say hello: %q %v", hello, err)
	}
	c.wg.Add(1)
	go c.read(br)
	return c, nil
}

// read dispatches reply lines to the request that waits for them.
func (c *serveClient) read(br *bufio.Reader) {
	defer c.wg.Done()
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			f := gjson.GetManyBytes(line, "type", "id", "data", "status", "message", "pid", "error")
			r := reply{Type: f[0].String(), ID: f[1].String(), Data: f[2].String(), Status: f[3].String(),
				Message: f[4].String() + f[6].String(), PID: int(f[5].Int()), At: time.Now()}
			c.mu.Lock()
			ch := c.waiters[r.ID]
			c.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			for _, ch := range c.waiters {
				close(ch)
			}
			c.waiters = map[string]chan reply{}
			c.mu.Unlock()
			return
		}
	}
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

// eval sends one eval of one py cell and passes every reply to onReply
// until its end, which it returns with the cell's cell_end.
func (c *serveClient) eval(id, session, mode, code string, onReply func(reply)) (cellEnd, end reply, err error) {
	ch := make(chan reply, 4096)
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
	req := map[string]any{"op": "eval", "id": id, "session": session,
		"cells": []map[string]any{{"language": "py", "code": code, "timeout": 600}}}
	if mode != "" {
		req["mode"] = mode
	}
	if err := c.send(req); err != nil {
		return reply{}, reply{}, err
	}
	for r := range ch {
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

// close shuts the server down and waits for it and the reader.
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
	c.wg.Wait()
	return err
}
