package gateway

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// One gateway serves the package's tests; kernels are reused where the case
// allows. Tests that need the real thing skip, saying why, when the
// interpreter lacks kernel_gateway or ipykernel.
var (
	testPython string
	testGW     *testGateway
	setupOnce  testkit.Once

	sharedOnce   sync.Once
	sharedKernel *Kernel
	sharedErr    error
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	testkit.Hermetic()
	// Deadlock watchdog: a hang prints every goroutine instead of waiting
	// for the go test timeout.
	watchdog := time.AfterFunc(9*time.Minute, func() {
		buf := make([]byte, 1<<20)
		fmt.Fprintf(os.Stderr, "gateway tests hung; goroutines:\n%s\n", buf[:runtime.Stack(buf, true)])
		cleanup()
		os.Exit(2)
	})
	remove, err := testkit.IsolateIPython()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	code := m.Run()
	watchdog.Stop()
	cleanup()
	if code == 0 {
		if leaked := leakedGoroutines(); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by package gateway:\n%s\n", leaked)
			return 1
		}
	}
	return code
}

// cleanup ends the shared kernel and the package's gateway.
func cleanup() {
	if sharedKernel != nil {
		_ = sharedKernel.Close()
	}
	if testGW != nil {
		testGW.stop()
	}
}

func setupGateway() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	py, err := testkit.RealPython()
	if err != nil {
		return err.Error()
	}
	testPython = py
	if out, err := exec.Command(py, "-c", "import kernel_gateway, ipykernel").CombinedOutput(); err != nil {
		return fmt.Sprintf("%s lacks the gateway packages: %s (CI installs them: pip install jupyter_kernel_gateway ipykernel)", py, out)
	}
	testGW, err = startTestGateway(ctx, py)
	if err != nil {
		return "could not start the test gateway: " + err.Error()
	}
	return ""
}

// needGateway starts the package's gateway on first use, so that fuzz
// workers and tests without it never pay for it.
func needGateway(t testing.TB) {
	t.Helper()
	setupOnce.Need(t, "real kernel gateway", setupGateway)
}

func testClient(t testing.TB) *Client {
	t.Helper()
	needGateway(t)
	c, err := NewClient(testGW.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// shared returns the kernel that cases without lasting damage share.
func shared(t testing.TB) *Kernel {
	t.Helper()
	c := testClient(t)
	sharedOnce.Do(func() {
		sharedKernel, sharedErr = c.StartKernel(context.Background(), KernelOptions{})
	})
	if sharedErr != nil {
		t.Fatalf("start shared kernel: %v", sharedErr)
	}
	if !sharedKernel.Alive() {
		t.Fatalf("shared kernel died earlier: %v", sharedKernel.Err())
	}
	return sharedKernel
}

// checkLeaks fails t when a goroutine or process it started outlives it;
// the package's gateway (and so the kernels below it) outlives every test.
func checkLeaks(t testing.TB) {
	t.Helper()
	leakcheck.Check(t, leakcheck.Options{IgnoreProcess: func(cmdline string) bool {
		return strings.Contains(cmdline, "kernel_gateway")
	}})
}

// ownKernel starts a kernel for one test and closes it at the end.
func ownKernel(t testing.TB, opts KernelOptions) *Kernel {
	t.Helper()
	c := testClient(t)
	checkLeaks(t)
	k, err := c.StartKernel(context.Background(), opts)
	if err != nil {
		t.Fatalf("start kernel: %v", err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

// leakedGoroutines lists goroutines still running code of this package.
func leakedGoroutines() string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
		var leaked []string
		for _, s := range stacks {
			if strings.Contains(s, "evalhost/gateway.") && !strings.Contains(s, "leakedGoroutines") &&
				!strings.Contains(s, "runTests") {
				leaked = append(leaked, s)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
