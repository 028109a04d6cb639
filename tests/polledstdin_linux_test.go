package tests

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// serve and mcp on stdio read a piped stdin through the poller, from a
// non-blocking open of their own of the pipe, on one P
// (cmd/evalhost/stdin_unix.go): mcp read it with blocking calls, which
// held a thread and cost it a fifth of its warm round trip
// (docs/architecture.md). Seen from outside: once the first answer is
// out, the process holds a second descriptor of its stdin's pipe, opened
// O_NONBLOCK, and fd 0 itself is left blocking.
func TestStdinPolled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		first string // a request answered only once reading has begun
	}{
		{"serve", []string{"serve", "--progress", "0"}, `{"op":"ping","id":"p"}` + "\n"},
		{"mcp", []string{"mcp"}, mcpInitLines},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stdin, stdout := startPiped(t, tc.args...)
			defer func() {
				stdin.Close()
				_, _ = io.Copy(io.Discard, stdout)
				_ = cmd.Wait()
			}()
			if _, err := io.WriteString(stdin, tc.first); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(stdout)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				if strings.Contains(line, `"p"`) || strings.Contains(line, `"init"`) {
					break
				}
			}
			pid := cmd.Process.Pid
			if flags := fdFlags(t, pid, 0); flags&0o4000 != 0 {
				t.Errorf("fd 0 flags %#o: O_NONBLOCK set on the shared open file", flags)
			}
			if fd := polledCopy(t, pid); fd < 0 {
				t.Errorf("no non-blocking descriptor of stdin's pipe besides fd 0: stdin is read with blocking calls")
			}
		})
	}
}

// polledCopy is a descriptor of pid other than 0 on fd 0's pipe whose open
// is non-blocking, or -1.
func polledCopy(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	stdin, err := os.Readlink(dir + "/0")
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd == 0 {
			continue
		}
		if link, err := os.Readlink(dir + "/" + e.Name()); err == nil && link == stdin && fdFlags(t, pid, fd)&0o4000 != 0 {
			return fd
		}
	}
	return -1
}

// fdFlags is the flags field of /proc/PID/fdinfo/FD (octal).
func fdFlags(t *testing.T, pid, fd int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no flags in fdinfo %d of %d", fd, pid)
	return 0
}
