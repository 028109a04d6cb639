package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// holdStart is a sitecustomize (its gate, starting and hold paths filled
// in) that holds the first runner interpreter started while the gate file
// exists: it writes its pid to the starting FIFO (which waits for the test
// to read it), then waits on the hold FIFO, which nobody writes, until it
// is killed. (The paths are in the file: an interpreter starts before it
// gets the environment of its session.)
const holdStart = `import os, sys
argv = getattr(sys, "orig_argv", sys.argv)
if os.path.exists(%[1]s) and any(os.path.basename(a).startswith("runner") for a in argv):
    os.unlink(%[1]s)
    with open(%[2]s, "w") as f:
        f.write(str(os.getpid()))
    os.open(%[3]s, os.O_RDONLY)
`

// A call cancelled before its cell ran, queued behind another call or while
// its session's interpreter starts, says that the cell was not run, so that
// the model knows nothing of it happened; the session serves the next call.
// The answer of one cancelled as its interpreter started said only
// "cancelled", as of a cell interrupted with no output.
func TestMCPCancelBeforeTheCellRan(t *testing.T) {
	const notRun = "cancelled before" // it started, the cell started
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, p *mcpPeer, dir string) (pid int) // until the call to cancel would wait
	}{
		{"queued behind a running call", func(t *testing.T, p *mcpPeer, dir string) int {
			started := testkit.Mkfifo(t, dir, "running")
			p.send(evalLine(1, "s", "open("+strconv.Quote(started)+", 'w').write('x')\nimport time\nwhile True: time.sleep(1)"))
			readFIFO(t, started)
			p.send(evalLine(2, "s", "print('ran')"))
			return 0
		}},
		{"while its interpreter starts", func(t *testing.T, p *mcpPeer, dir string) int {
			p.send(evalLine(2, "s", "print('ran')"))
			pid, _ := strconv.Atoi(readFIFO(t, filepath.Join(dir, "starting")))
			return pid
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			site := filepath.Join(dir, "site")
			if err := os.MkdirAll(site, 0o700); err != nil {
				t.Fatal(err)
			}
			gate := filepath.Join(dir, "gate")
			custom := fmt.Sprintf(holdStart, strconv.Quote(gate), strconv.Quote(filepath.Join(dir, "starting")), strconv.Quote(filepath.Join(dir, "hold")))
			if err := os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte(custom), 0o600); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tc.name, "starts") {
				if err := os.WriteFile(gate, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			testkit.Mkfifo(t, dir, "starting")
			testkit.Mkfifo(t, dir, "hold")
			cmd := command(t, "mcp")
			cmd.Env = append(cmd.Env, "PYTHONPATH="+site)
			p := startMCPPeer(t, cmd)
			pid := tc.setup(t, p, dir)
			p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
			if a := p.await("2"); !strings.Contains(a, `"status":"cancelled"`) || !strings.Contains(a, notRun) || strings.Contains(a, `\nran"`) {
				t.Errorf("the cancelled call answered %s\nwant status cancelled, %q and no output", a, notRun)
			}
			if pid > 0 && !leakcheck.Gone(pid, hangBound) {
				t.Errorf("the interpreter %d, cancelled as it started, outlived the call", pid)
			}
			p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
			p.send(evalLine(3, "s", "print('ran after')"))
			if a := p.await("3"); !strings.Contains(a, `\nran after"`) {
				t.Errorf("the call after the cancel answered %s", a)
			}
		})
	}
}

// mcpPeer is a line client of an `evalhost mcp` it started, initialized.
type mcpPeer struct {
	t     *testing.T
	stdin io.WriteCloser
	lines chan string
}

func startMCPPeer(t *testing.T, cmd *exec.Cmd) *mcpPeer {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mcpPeer{t: t, stdin: stdin, lines: make(chan string, 100)}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	p.send(strings.TrimSuffix(mcpInitLines, "\n"))
	p.await(`"init"`)
	return p
}

func (p *mcpPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// await returns the response with id (raw JSON), skipping notifications
// and other responses.
func (p *mcpPeer) await(id string) string {
	p.t.Helper()
	for line := range p.lines {
		if m := gjson.Parse(line); !m.Get("method").Exists() && m.Get("id").Raw == id {
			return line
		}
	}
	p.t.Fatalf("evalhost mcp ended before answering %s", id)
	return ""
}

func evalLine(id int, session, code string) string {
	c, _ := json.Marshal(code)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"eval","arguments":{"session":%q,"cells":[{"code":%s}]}}}`,
		id, session, c)
}

// readFIFO reads the FIFO at path to its writer's close.
func readFIFO(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
