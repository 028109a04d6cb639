package shared

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// squatUID is the other user the squatter runs as: a uid of no account,
// which the kernel treats as a user like any other.
const squatUID = 54321

// squatter is another local user's fake kernel gateway (helperSquat).
type squatter struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string // where it listens, once it does
	lines chan string
}

// startSquatter runs helperSquat as squatUID: a copy of the test binary
// that user can run. It skips t unless this process may change uid (root).
func startSquatter(t *testing.T, env ...string) *squatter {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	bin := squatBinary(t)
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append([]string{helperEnv + "=squat"}, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: squatUID, Gid: squatUID}}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run a process as uid %d: %v", squatUID, err)
	}
	s := &squatter{cmd: cmd, stdin: stdin, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		for range s.lines {
		}
		_ = cmd.Wait()
	})
	first := <-s.lines
	if addr, ok := strings.CutPrefix(first, "listening "); ok {
		s.addr = addr
	} else if first != "watching" {
		t.Fatalf("squatter said %q first", first)
	}
	return s
}

// requests ends the squatter and returns the requests it was sent, each
// "METHOD PATH AUTHORIZATION".
func (s *squatter) requests(t *testing.T) []string {
	t.Helper()
	s.stdin.Close()
	var reqs []string
	ended := false
	for l := range s.lines {
		if r, ok := strings.CutPrefix(l, "request "); ok {
			reqs = append(reqs, r)
		}
		if l == "end" {
			ended = true
		}
	}
	if err := s.cmd.Wait(); err != nil || !ended {
		t.Fatalf("squatter: %v (ended: %v)", err, ended)
	}
	return reqs
}

var (
	squatOnce sync.Once
	squatBin  string
	squatErr  error
)

// squatBinary copies the test binary where squatUID can run it: go test's
// build directory is private to this user.
func squatBinary(t *testing.T) string {
	t.Helper()
	squatOnce.Do(func() {
		var dir string
		if dir, squatErr = os.MkdirTemp("", "evalhost-squat-"); squatErr != nil {
			return
		}
		testCleanups = append(testCleanups, func() { os.RemoveAll(dir) })
		if squatErr = os.Chmod(dir, 0o755); squatErr != nil {
			return
		}
		self, err := os.Executable()
		if err != nil {
			squatErr = err
			return
		}
		raw, err := os.ReadFile(self)
		if err != nil {
			squatErr = err
			return
		}
		squatBin = filepath.Join(dir, "squat.test")
		squatErr = os.WriteFile(squatBin, raw, 0o755)
	})
	if squatErr != nil {
		t.Fatalf("copy the test binary for another user: %v", squatErr)
	}
	return squatBin
}

var gatewayPortArg = regexp.MustCompile(`^--KernelGatewayApp\.port=(\d+)$`)

// helperSquat is another user's fake gateway. With
// EVALHOST_SHARED_TEST_SQUAT_PARENT set it prints "watching" and waits
// for a kernel_gateway child of that pid whose argv names a port, and
// takes that port before the gateway can (the attack on a port chosen,
// closed and passed on); otherwise it listens on
// EVALHOST_SHARED_TEST_SQUAT_PORT, or a port of its own, and prints
// "listening ADDR". It answers as a gateway would and prints
// "request METHOD PATH AUTHORIZATION" for each request before answering
// it. Its stdin closing ends it, with "end" once every request is printed.
func helperSquat() {
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	var l net.Listener
	if parent := os.Getenv("EVALHOST_SHARED_TEST_SQUAT_PARENT"); parent != "" {
		fmt.Println("watching")
		l = stealPort(parent, stop)
	} else {
		var err error
		if l, err = net.Listen("tcp4", "127.0.0.1:"+cmp.Or(os.Getenv("EVALHOST_SHARED_TEST_SQUAT_PORT"), "0")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("listening " + l.Addr().String())
	}
	if l == nil {
		fmt.Println("end")
		return
	}
	var mu sync.Mutex
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fmt.Println("request", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		mu.Unlock()
		switch {
		case r.URL.Path == "/api/kernelspecs":
			_, _ = w.Write([]byte(`{"default":"python3","kernelspecs":{"python3":{"name":"python3","spec":{"language":"python"}}}}`))
		case r.URL.Path == "/api/kernels" && r.Method == http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":"k1","name":"python3"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})}
	go func() { _ = srv.Serve(l) }()
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	fmt.Println("end")
}

// stealPort polls /proc for a kernel_gateway child of parent naming its
// port in argv, and listens on that port; nil once stop closes first.
func stealPort(parent string, stop <-chan struct{}) net.Listener {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			stat, err := os.ReadFile(p + "/stat")
			if err != nil {
				continue
			}
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if len(f) < 2 || f[1] != parent {
				continue
			}
			raw, _ := os.ReadFile(p + "/cmdline")
			args := strings.Split(string(raw), "\x00")
			for _, a := range args {
				m := gatewayPortArg.FindStringSubmatch(a)
				if m == nil || m[1] == "0" || !strings.Contains(string(raw), "kernel_gateway") {
					continue
				}
				if port, _ := strconv.Atoi(m[1]); port > 0 {
					if l, err := net.Listen("tcp4", "127.0.0.1:"+m[1]); err == nil {
						return l
					}
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
}
