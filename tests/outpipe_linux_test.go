package tests

import (
	"io"
	"os"
	"syscall"
	"testing"
)

// run grows a pipe it writes to, so bulk output does not wait for the
// reader at every 64 KiB.
func TestRunGrowsItsOutputPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := command(t, "run", "-c", "print('hi')")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	out, err := io.ReadAll(r)
	if err := cmd.Wait(); err != nil || string(out) != "hi\n" {
		t.Fatalf("run printed %q, err %v", out, err)
	}
	size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_GETPIPE_SZ, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if size < 1<<20 {
		t.Errorf("the output pipe holds %d bytes, want at least 1 MiB", size)
	}
}
