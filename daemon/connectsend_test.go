package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"testing"

	"github.com/evalhost/evalhost/serve"
)

// A process that greets a command and then stops reading (it is being
// stopped, or replaced by a command of another build) has taken none of
// the command's line: ConnectSend connects again and sends it there. The
// command said "cannot send the cells to the background process: write
// unix ...: broken pipe" (seen with two builds' commands racing).
func TestConnectSendAgainWhenNotRead(t *testing.T) {
	paths := PathsFor(t.TempDir())
	if err := ensureDir(paths.Dir); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: paths.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(paths.Socket, 0o600); err != nil {
		t.Fatal(err)
	}
	hello, _ := json.Marshal(serve.Hello{Type: serve.TypeHello, PID: os.Getpid(), Version: "test"})
	got := make(chan string, 1)
	go func() {
		// The first connection: greeted by a process that reads nothing more.
		nc, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.CloseRead()
		nc.Write(append(hello, '\n'))
		// The second: a process that reads the line.
		nc2, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		defer nc2.Close()
		nc2.Write(append(hello, '\n'))
		line, _ := bufio.NewReader(nc2).ReadString('\n')
		got <- line
	}()
	c, err := ConnectSend(context.Background(), DialConfig{Paths: paths, Version: "test"}, map[string]string{"op": "ping", "id": "x"})
	if err != nil {
		t.Fatalf("ConnectSend: %v", err)
	}
	defer c.Close()
	if line := <-got; line != `{"id":"x","op":"ping"}`+"\n" {
		t.Fatalf("the second connection read %q", line)
	}
}
