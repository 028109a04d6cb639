package serve_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// The reader of Serve's output leaving (Config.OutputGone) ends Serve: as
// at the end of its input, returning nil, when every answer was written,
// its input open or not; at once, returning ErrOutputGone, when an eval is
// unanswered, before or after its input ended. Before, evalhost serve
// cancelled Serve's context at any close of its stdout, and exited 141
// saying it ended the requests in flight though none was.
func TestServeOutputGone(t *testing.T) {
	hold := "print('go', flush=True)\nimport time\ntime.sleep(600)"
	for _, tc := range []struct {
		name     string
		code     string // the eval's cell
		answered bool   // its end is read before the reader goes
		inputEnd bool   // the input ends first
		want     error
	}{
		{"every answer written, input open", "1+1", true, false, nil},
		{"every answer written, input at its end", "1+1", true, true, nil},
		{"an eval unanswered, input open", hold, false, false, serve.ErrOutputGone},
		{"an eval unanswered, input at its end", hold, false, true, serve.ErrOutputGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gone := make(chan struct{})
			c := startServer(t, context.Background(), serve.Config{OutputGone: gone})
			c.send(map[string]any{"op": "eval", "id": "e", "cells": []any{map[string]any{"code": tc.code, "timeout": 600}}})
			if tc.answered {
				c.reply("end", "e")
			} else {
				c.until("e running", func(m map[string]any) bool { return m["id"] == "e" && m["type"] == "stdout" })
			}
			if tc.inputEnd {
				c.in.Close()
			}
			close(gone)
			if err := c.wait(); !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("Serve returned %v, want %v", err, tc.want)
			}
		})
	}
}

// sentInput is an input that holds its requests back until ReadSent,
// as a client's are when the watch of the output wakes before the reader:
// they are then read, then the end.
type sentInput struct {
	can  bool // ReadSent can
	data []byte
	sent chan struct{}
	once sync.Once
}

func (in *sentInput) Read(p []byte) (int, error) {
	<-in.sent
	if len(in.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, in.data)
	in.data = in.data[n:]
	return n, nil
}

func (in *sentInput) ReadSent() bool {
	if in.can {
		in.once.Do(func() { close(in.sent) })
	}
	return in.can
}

// goneOutput takes lines until gone closes, then fails their writes.
type goneOutput struct{ gone chan struct{} }

func (w goneOutput) Write(p []byte) (int, error) {
	select {
	case <-w.gone:
		return 0, syscall.EPIPE
	default:
		return len(p), nil
	}
}

// A request the client sent before the reader of the output left counts
// as unanswered, read or not when the server saw the reader leave: Serve
// reads what was sent (an input's ReadSent), runs no eval of it, and
// returns ErrOutputGone, as it does for one it read first. Before, it
// stopped reading at once and returned nil: evalhost serve exited 0 or
// 141 for the same client by which it saw first.
func TestServeOutputGoneReadsWhatWasSent(t *testing.T) {
	dir := t.TempDir()
	eval := `{"op":"eval","id":"e","cwd":` + strconv.Quote(dir) + `,"cells":[{"code":"open('ran', 'w')"}]}` + "\n"
	for _, tc := range []struct {
		name string
		sent string
		can  bool // the input can be read up to what was sent
		want error
	}{
		{"an eval", eval, true, serve.ErrOutputGone},
		{"an eval without its newline", strings.TrimSuffix(eval, "\n"), true, serve.ErrOutputGone},
		{"a ping, whose answer cannot be written", `{"op":"ping","id":"p"}` + "\n", true, serve.ErrOutputGone},
		{"half a line", `{"op":"eval","id":"e","ce`, true, serve.ErrOutputGone},
		{"nothing", "", true, nil},
		{"blank lines", "\n \n", true, nil},
		{"a shutdown", `{"op":"shutdown"}` + "\n", true, nil},
		{"an eval, but the input cannot tell", eval, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &sentInput{can: tc.can, data: []byte(tc.sent), sent: make(chan struct{})}
			t.Cleanup(func() { in.once.Do(func() { close(in.sent) }) })
			gone := make(chan struct{})
			srv := serve.New(serve.Config{Sessions: sessions.Config{Home: t.TempDir()}, OutputGone: gone})
			close(gone)
			if err := srv.Serve(context.Background(), in, goneOutput{gone}); !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("Serve returned %v, want %v", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Fatal("the eval ran")
			}
		})
	}
}
