package remotetest

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// helperEnv makes this test binary a helper process that builds a Host of
// the kind named and waits to be killed.
const helperEnv = "EVALHOST_REMOTETEST_HOST_HELPER"

// TestKilledTestLeavesNoHost: a test process killed mid-test (SIGKILL: go
// test's timeout, the OOM killer) leaves neither the host's namespace nor
// its link's devices behind, with either kind of link, nor files in the
// temporary directory (the host's own, the watcher's output).
func TestKilledTestLeavesNoHost(t *testing.T) {
	if kind := os.Getenv(helperEnv); kind != "" {
		h := newHost(t, LinkKind(kind))
		fmt.Printf("\nready %s %s %s %d %s %s\n", h.NS, h.HostLink, h.Link, h.watcher.cmd.Process.Pid,
			h.watcher.outName, h.Dir)
		select {}
	}
	for _, kind := range []LinkKind{LinkVeth, LinkTAP} {
		t.Run(string(kind), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledTestLeavesNoHost$", "-test.v")
			cmd.Env = append(os.Environ(), helperEnv+"="+string(kind))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var ready []string
			var said strings.Builder
			for lines := bufio.NewScanner(out); ready == nil && lines.Scan(); {
				said.WriteString(lines.Text() + "\n")
				if f := strings.Fields(lines.Text()); len(f) == 7 && f[0] == "ready" {
					ready = f[1:]
				}
			}
			if ready == nil {
				cmd.Wait()
				if strings.Contains(said.String(), "--- SKIP") {
					t.Skipf("the helper skipped: %s", said.String())
				}
				t.Fatalf("the helper made no host: %s", said.String())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			ns, hostLink, link := ready[0], ready[1], ready[2]
			watcher, _ := strconv.Atoi(ready[3])
			if !leakcheck.Gone(watcher, 30*time.Second) {
				t.Fatalf("the teardown watcher (pid %d) is still running 30 s after the test process died", watcher)
			}
			if list, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(list), ns) {
				t.Errorf("namespace %s outlived the killed test: %s", ns, list)
			}
			for _, dev := range []string{hostLink, link} {
				if show, err := exec.Command("ip", "link", "show", dev).CombinedOutput(); err == nil {
					t.Errorf("device %s outlived the killed test: %s", dev, show)
				}
			}
			for _, path := range ready[4:] {
				if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s outlived the killed test (lstat: %v)", path, err)
				}
			}
		})
	}
}
