package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// noProcEnv makes TestLongHomeWithoutProc's child run its checks.
const noProcEnv = "EVALHOST_DAEMON_TEST_NOPROC"

// Without /proc a long home's socket can be neither bound nor connected:
// Serve and Connect say to shorten EVALHOST_HOME, and Connect starts no
// process that could only fail the same way. The checks run in a child
// with a mount namespace of its own, /proc unmounted there.
func TestLongHomeWithoutProc(t *testing.T) {
	if os.Getenv(noProcEnv) == "" {
		runWithoutProc(t)
		return
	}
	if err := syscall.Unmount("/proc", syscall.MNT_DETACH); err != nil {
		t.Fatalf("unmount /proc: %v", err)
	}
	paths := PathsFor(filepath.Join(t.TempDir(), strings.Repeat("h", 120)))
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"serve", func() error { return Serve(context.Background(), Config{Paths: paths, Version: "test"}) }},
		{"connect", func() error {
			_, err := Connect(context.Background(), DialConfig{Paths: paths, Version: "test", Command: func() *exec.Cmd {
				t.Error("Connect started a process")
				return exec.Command("true")
			}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if !errors.Is(err, errSocketPath) || !strings.Contains(err.Error(), "set EVALHOST_HOME to a shorter directory") {
				t.Fatalf("%v, want the socket path's error", err)
			}
		})
	}
}

// runWithoutProc runs the calling test again in a child of its own mount
// namespace (which unmounts /proc there) and fails with its output.
func runWithoutProc(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace of its own")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), noProcEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Skipf("cannot start a child in its own mount namespace: %v", err)
	}
	if err != nil {
		t.Fatalf("without /proc: %v\n%s", err, out)
	}
}
