package shared

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/gateway"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// One gateway serves the tests that only need one; tests that change or
// end a gateway start their own in a fresh home. Tests that need the real
// thing skip, saying why, when the interpreter lacks kernel_gateway or
// ipykernel.
var (
	testPython string
	testHome   string
	testEP     *Endpoint
	setupOnce  testkit.Once
	// testCleanups run after every test, before the process exits.
	testCleanups []func()
)

const helperEnv = "EVALHOST_SHARED_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "acquire":
		helperAcquire()
		return
	case "cell":
		helperCell()
		return
	case "squat":
		helperSquat()
		return
	case "unmapped":
		helperUnmapped()
		return
	case "dial":
		helperDial()
		return
	}
	testkit.Hermetic()
	remove, err := testkit.IsolateIPython()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	for _, f := range testCleanups {
		f()
	}
	if testEP != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _ = Stop(ctx, testHome)
		cancel()
	}
	if testHome != "" {
		_ = os.RemoveAll(testHome)
	}
	remove()
	os.Exit(code)
}

func setupGateway() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	py, err := testkit.RealPython()
	if err != nil {
		return err.Error()
	}
	testPython = py
	if err := Check(ctx, py); err != nil {
		return fmt.Sprintf("%v (CI installs them: pip install jupyter_kernel_gateway ipykernel)", err)
	}
	testHome, err = os.MkdirTemp("", "evalhost-shared-test-")
	if err != nil {
		return err.Error()
	}
	testEP, err = Acquire(ctx, testHome, py)
	if err != nil {
		return "could not start the test gateway: " + err.Error()
	}
	return ""
}

// needGateway starts the package's gateway on first use.
func needGateway(t testing.TB) {
	t.Helper()
	setupOnce.Need(t, "real kernel gateway", setupGateway)
}

// checkLeaks fails t when a goroutine or process it started outlives it:
// a gateway it started and did not stop, or a kernel below it. Only the
// package's gateway outlives tests.
func checkLeaks(t testing.TB) {
	t.Helper()
	leakcheck.Check(t, leakcheck.Options{IgnorePIDs: []int{testEP.PID}})
}

// helper re-executes the test binary as another evalhost process would
// be: mode says what it does, env adds to the environment.
func helper(home, python, mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode,
		"EVALHOST_SHARED_TEST_HOME="+home, "EVALHOST_SHARED_TEST_PYTHON="+python)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// helperAcquire: Acquire once and print the endpoint.
func helperAcquire() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ep, err := Acquire(ctx, os.Getenv("EVALHOST_SHARED_TEST_HOME"), os.Getenv("EVALHOST_SHARED_TEST_PYTHON"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(ep)
}

// helperCell: start a kernel on the shared gateway with this process's
// environment as the kernel's, run EVALHOST_SHARED_TEST_CODE
// (printing the kernel's id once the cell has started) and print its stdout. With EVALHOST_SHARED_TEST_HANG set it never ends:
// the test kills it as a SIGKILLed evalhost would be.
func helperCell() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := map[string]*string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && !strings.HasPrefix(k, "EVALHOST_SHARED_TEST") {
			env[k] = &v
		}
	}
	l := Local{Home: os.Getenv("EVALHOST_SHARED_TEST_HOME"), Python: os.Getenv("EVALHOST_SHARED_TEST_PYTHON")}
	k, _, err := l.StartKernel(ctx, gateway.KernelOptions{Env: env, NoPrelude: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var out strings.Builder
	req := frames.Request{ID: "c1", Code: os.Getenv("EVALHOST_SHARED_TEST_CODE")}
	done, err := k.Execute(ctx, req, func(f frames.Frame) {
		switch f.Type {
		case frames.TypeStarted: // the kernel is busy with the cell
			fmt.Println("kernel " + k.ID())
		case frames.TypeStdout:
			out.WriteString(f.Data)
		}
	})
	if err != nil || done.Status != "ok" {
		fmt.Fprintln(os.Stderr, "cell:", err, done.Status, done.Ename, done.Evalue)
		os.Exit(1)
	}
	fmt.Print(out.String())
	if os.Getenv("EVALHOST_SHARED_TEST_HANG") != "" {
		select {}
	}
	_ = k.Close()
}

// testKernel starts a kernel on the package's test gateway, closed when
// the test ends.
func testKernel(t *testing.T, ctx context.Context) *gateway.Kernel {
	t.Helper()
	return kernelOn(t, ctx, testEP)
}

// kernelOn starts a kernel on the gateway at ep, closed when the test ends.
func kernelOn(t *testing.T, ctx context.Context, ep *Endpoint) *gateway.Kernel {
	t.Helper()
	c, err := gateway.NewClient(ep.Config())
	if err != nil {
		t.Fatal(err)
	}
	k, err := c.StartKernel(ctx, gateway.KernelOptions{NoPrelude: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}
