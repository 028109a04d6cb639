package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// socketPair is a Unix stream socket pair: stdout, given to the writer,
// and client, its reader's end; blocking, as a client hands them over.
func socketPair(t *testing.T) (client, stdout *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	client, stdout = os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "stdout")
	t.Cleanup(func() { client.Close(); stdout.Close() })
	return client, stdout
}

// A stream socket on stdout is written whole to a reader that takes it
// late, its open file left blocking, also once another holder made it
// non-blocking (serve's stdin, when one socket is both: the plain write
// failed there with EAGAIN); a deadline ends a write that waits for room,
// and so does Close, which may be called twice; a peer that closed is
// EPIPE, without SIGPIPE.
func TestSocketWriter(t *testing.T) {
	// The package's spare reaper (prestart) may start meanwhile: not this
	// test's.
	leakcheck.Check(t, leakcheck.Options{FDs: true, IgnoreProcess: func(cmdline string) bool {
		return strings.HasPrefix(cmdline, "evalhost-reaper")
	}})
	nonblock := func(t *testing.T, f *os.File) bool {
		fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fl&unix.O_NONBLOCK != 0
	}
	t.Run("whole, to a late reader", func(t *testing.T) {
		for _, shared := range []bool{false, true} {
			client, stdout := socketPair(t)
			if shared { // as pollableInput leaves a socket that is stdin too
				if err := unix.SetNonblock(int(stdout.Fd()), true); err != nil {
					t.Fatal(err)
				}
			}
			w := socketOutput(stdout)
			if w == nil {
				t.Fatal("no writer for a stream socket")
			}
			want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB, many times the socket's buffer
			done := make(chan error, 1)
			go func() {
				_, err := w.Write(want)
				done <- err
			}()
			testkit.WaitNoRoom(t, stdout) // the write waits for the reader
			got := make([]byte, len(want))
			_, err := io.ReadFull(client, got)
			if err != nil || <-done != nil || !bytes.Equal(got, want) {
				t.Fatalf("shared non-blocking %v: read %v, the bytes the same: %v", shared, err, bytes.Equal(got, want))
			}
			if nonblock(t, client) || nonblock(t, stdout) != shared {
				t.Errorf("the open file's O_NONBLOCK changed")
			}
			w.Close()
		}
	})
	for _, tc := range []struct {
		name string
		end  func(w *socketWriter)
		want error
	}{
		{"a deadline", func(w *socketWriter) { w.SetWriteDeadline(time.Now()) }, os.ErrDeadlineExceeded},
		{"Close", func(w *socketWriter) { w.Close(); w.Close() }, os.ErrClosed},
	} {
		t.Run(tc.name+" ends a waiting write", func(t *testing.T) {
			_, stdout := socketPair(t)
			w := socketOutput(stdout)
			defer w.Close()
			done := make(chan error, 1)
			go func() {
				_, err := w.Write(make([]byte, 8<<20))
				done <- err
			}()
			testkit.WaitNoRoom(t, stdout)
			tc.end(w)
			if err := <-done; !errors.Is(err, tc.want) {
				t.Errorf("the waiting write ended with %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("EPIPE", func(t *testing.T) {
		client, stdout := socketPair(t)
		w := socketOutput(stdout)
		defer w.Close()
		client.Close()
		if _, err := w.Write([]byte("late\n")); !errors.Is(err, syscall.EPIPE) {
			t.Errorf("a write with the reader gone: %v, want EPIPE", err)
		}
	})
}

// A stream socket on stderr (socketStderr) carries a log line to a reader
// that takes it late, after the reply line being sent, never inside it;
// a line waits lineWait at most, for its turn and for room, and after one
// waited in vain the next do not wait until one goes.
func TestSocketLog(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{FDs: true, IgnoreProcess: func(cmdline string) bool {
		return strings.HasPrefix(cmdline, "evalhost-reaper")
	}})
	// stdio is one socket as stdin (non-blocking, as pollableInput leaves
	// it), stdout and stderr: stderr's writer first, as dispatch makes it.
	stdio := func(t *testing.T, wait time.Duration) (client, sock *os.File, log, out *socketWriter) {
		client, sock = socketPair(t)
		if err := unix.SetNonblock(int(sock.Fd()), true); err != nil {
			t.Fatal(err)
		}
		log = socketOutput(sock)
		log.asLog(wait)
		out = socketOutput(sock)
		t.Cleanup(func() { out.Close(); log.Close() })
		return client, sock, log, out
	}
	reply := bytes.Repeat([]byte("r"), 4<<20) // many times the socket's buffer: sent in parts
	line := []byte("time=now level=WARN msg=\"second signal\"\n")
	t.Run("after the reply being sent, whole", func(t *testing.T) {
		client, sock, log, out := stdio(t, time.Minute)
		replied, logged := make(chan error, 1), make(chan error, 1)
		go func() { _, err := out.Write(reply); replied <- err }()
		testkit.WaitNoRoom(t, sock) // the reply waits for the reader
		go func() { _, err := log.Write(line); logged <- err }()
		testkit.WaitParked(t, "(*sendTurn).takeBy(") // the line waits for its turn
		got := make([]byte, len(reply)+len(line))
		if _, err := io.ReadFull(client, got); err != nil || <-replied != nil || <-logged != nil {
			t.Fatalf("read %v", err)
		}
		if !bytes.Equal(got[:len(reply)], reply) || !bytes.Equal(got[len(reply):], line) {
			t.Errorf("the log line is not whole after the reply: %q", got[max(0, bytes.IndexByte(got, 't')-8):][:60])
		}
	})
	t.Run("a reader that takes nothing", func(t *testing.T) {
		client, sock, log, out := stdio(t, 50*time.Millisecond)
		replied := make(chan error, 1)
		go func() { _, err := out.Write(reply); replied <- err }()
		testkit.WaitNoRoom(t, sock)
		// The reply holds the turn: the line gives up, nothing of it sent.
		if n, err := log.Write(line); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a line behind a stalled reply: %d, %v; want 0 and the deadline", n, err)
		}
		out.SetWriteDeadline(time.Now())
		if err := <-replied; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the reply: %v", err)
		}
		// Its turn free, the socket full: the next line does not wait.
		if _, err := log.Write(line); !errors.Is(err, syscall.EAGAIN) {
			t.Errorf("a line after one waited in vain: %v, want EAGAIN at once", err)
		}
		// The reader takes what is there: lines go again, and wait again.
		queued, err := unix.IoctlGetInt(int(client.Fd()), unix.SIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(client, make([]byte, queued)); err != nil {
			t.Fatal(err)
		}
		if _, err := log.Write(line); err != nil {
			t.Errorf("a line once the reader took the rest: %v", err)
		}
	})
	// A line too long for the room the reader left: part of it is sent,
	// and its wait for room ends before the rest. The rest is owed to
	// the stream: the next write sends it before its own bytes, so that
	// the reply after it is still a line of its own (the reply was glued
	// to the part sent, and the client lost both).
	for _, pair := range []struct {
		name string
		make func(t *testing.T) (client, sock *os.File)
	}{{"unix", socketPair}, {"tcp", tcpPair}} {
		t.Run("a line cut by its wait, then a reply/"+pair.name, func(t *testing.T) {
			client, sock := pair.make(t)
			if err := unix.SetsockoptInt(int(sock.Fd()), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096); err != nil {
				t.Fatal(err)
			}
			if err := unix.SetNonblock(int(sock.Fd()), true); err != nil {
				t.Fatal(err)
			}
			log := socketOutput(sock)
			log.asLog(50 * time.Millisecond)
			out := socketOutput(sock)
			long := append(bytes.Repeat([]byte("w"), 4<<20), '\n')
			n, err := log.Write(long)
			if n == 0 || n == len(long) || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("a line past the room: %d of %d bytes sent, %v; want a part and the deadline", n, len(long), err)
			}
			replyLine := []byte(`{"reply":1}` + "\n")
			replied := make(chan error, 1)
			go func() { _, err := out.Write(replyLine); replied <- err }()
			got := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(client); got <- b }()
			if err := <-replied; err != nil {
				t.Fatalf("the reply: %v", err)
			}
			out.Close()
			log.Close()
			sock.Close() // the reader's EOF
			b := <-got
			if !bytes.Equal(b, append(long, replyLine...)) {
				t.Errorf("the stream: %d bytes ending %q; want the whole line (%d bytes), then the reply", len(b), b[max(0, len(b)-40):], len(long))
			}
		})
	}
}

// tcpPair is a loopback TCP connection, as inetd or socat's TCP-LISTEN
// give serve one: client, the peer's end, and sock, serve's; blocking.
func tcpPair(t *testing.T) (client, sock *os.File) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if client, err = c.(*net.TCPConn).File(); err != nil {
		t.Fatal(err)
	}
	if sock, err = a.(*net.TCPConn).File(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); sock.Close() })
	return client, sock
}

// serve's and mcp's stderr, a stream socket their reading of stdin made
// non-blocking (socat's EXEC with stderr: one socket for all three),
// carries what they write to a reader that takes it late: here a flag's
// refusal, written while the socket is full. os.Stderr's plain write
// failed there with EAGAIN, and the line was lost.
func TestSocketStderrReachesLateReader(t *testing.T) {
	for _, args := range [][]string{{"serve", "--no-such-flag"}, {"mcp", "--no-such-flag"}} {
		t.Run(args[0], func(t *testing.T) {
			client, stderr := socketPair(t)
			if err := unix.SetNonblock(int(stderr.Fd()), true); err != nil {
				t.Fatal(err)
			}
			filled := 0
			for {
				n, err := unix.Write(int(stderr.Fd()), make([]byte, 65536))
				if err == unix.EAGAIN {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				filled += n
			}
			done := make(chan int, 1)
			go func() { done <- dispatch(args, strings.NewReader(""), io.Discard, stderr) }()
			testkit.WaitParked(t, ").waitRoom(") // the refusal waits for room
			if _, err := io.ReadFull(client, make([]byte, filled)); err != nil {
				t.Fatal(err)
			}
			if code := <-done; code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			queued, err := unix.IoctlGetInt(int(client.Fd()), unix.SIOCINQ)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, queued)
			if _, err := io.ReadFull(client, got); err != nil {
				t.Fatal(err)
			}
			if want := "evalhost " + args[0] + ": unknown flag: --no-such-flag\n"; !strings.HasPrefix(string(got), want) {
				t.Errorf("stderr read late: %q, want it to begin %q", got, want)
			}
		})
	}
}
