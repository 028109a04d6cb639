package main

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stdout's reader is known gone once the client closed its end, without a
// write, on a pipe and on a Unix socket; a write then fails with EPIPE
// (not SIGPIPE, though the test's own descriptor is no 1). Until then the
// watch says nothing, also while the pipe has room for writing.
func TestWatchedOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T) (client, stdout *os.File)
	}{
		{"pipe", func(t *testing.T) (*os.File, *os.File) { return blockingPipe(t, "client", "stdout") }},
		{"socket", func(t *testing.T) (*os.File, *os.File) {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			client, stdout := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "stdout")
			t.Cleanup(func() { client.Close(); stdout.Close() })
			return client, stdout
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, stdout := tc.make(t)
			w, end, stop := watchedOutput(stdout, true)
			gone := end.watch.Gone()
			defer stop()
			if _, err := w.Write([]byte("reply\n")); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Read(make([]byte, 16)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-gone:
				t.Fatal("the reader is said gone while it is there")
			default:
			}
			client.Close()
			select {
			case <-gone:
			case <-time.After(30 * time.Second):
				t.Fatal("the closed reader was not seen within 30 s")
			}
			if _, err := w.Write([]byte("late\n")); !errors.Is(err, syscall.EPIPE) {
				t.Errorf("a write with the reader gone: %v, want EPIPE", err)
			}
		})
	}
}
