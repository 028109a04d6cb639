package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/proctree"
	"github.com/evalhost/evalhost/internal/testkit"
)

func TestCommandTools(t *testing.T) {
	testkit.Clean(t, time.Minute)
	strayPid := filepath.Join(t.TempDir(), "stray")
	tools := CommandTools(map[string]string{
		// exits at once, but leaves a process holding its stdout
		"stray":     `sleep 300 & echo $! > ` + strayPid + `; echo started`,
		"json":      `printf '{"got": '; cat; echo '}'`,
		"text":      `printf 'hello\nworld\n'`,
		"number":    `echo 42`,
		"empty":     `true`,
		"env":       `printf '%s %s %s' "$EVALHOST_TOOL" "$EVALHOST_SESSION" "$EVALHOST_RUN"`,
		"stdin":     `cat`,
		"fail":      `echo partial; echo "boom: bad path" >&2; exit 3`,
		"signal":    `kill -TERM $$`,
		"strayfail": `sleep 300 & echo $! > ` + strayPid + `fail; exit 4`,
		"noisy":     `head -c 5000 /dev/zero | tr '\0' x >&2; echo last words >&2; exit 1`,
	})
	tests := []struct {
		name, tool, args string
		want             string // JSON value
		errHas           []string
		after            func(t *testing.T) // more checks, when set
	}{
		{"JSON output", "json", `{"q":"x","n":1}`, `{"got":{"q":"x","n":1}}`, nil, nil},
		{"text output is a string", "text", `{}`, `"hello\nworld"`, nil, nil},
		{"JSON scalar", "number", `{}`, `42`, nil, nil},
		{"empty output is null", "empty", `{}`, `null`, nil, nil},
		{"call in the environment", "env", `{}`, `"env s1 r1"`, nil, nil},
		{"args on stdin", "stdin", `{"a":[1,"b"]}`, `{"a":[1,"b"]}`, nil, nil},
		{"non-zero exit carries stderr", "fail", `{}`, "", []string{`tool "fail" exited with status 3`, "boom: bad path"}, nil},
		{"signal", "signal", `{}`, "", []string{"killed by signal: terminated"}, nil},
		{"stderr tail only", "noisy", `{}`, "", []string{"status 1", "last words"}, nil},
		{"unknown tool lists known ones", "nope", `{}`, "", []string{`unknown tool "nope"; known tools: empty, env, fail, json`}, nil},
		{"background process holding stdout is killed", "stray", `{}`, "",
			[]string{`tool "stray" failed: it exited, but processes it started kept its stdout or stderr open`, "cmd >/dev/null 2>&1 &"},
			wantGone(strayPid)},
		{"failed command's background process is killed", "strayfail", `{}`, "",
			[]string{`tool "strayfail" exited with status 4 (processes it left running were killed)`}, wantGone(strayPid + "fail")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tools.Call(context.Background(), Call{Session: "s1", Run: "r1", Name: tt.tool, Args: []byte(tt.args)})
			if tt.after != nil {
				defer tt.after(t)
			}
			if tt.errHas != nil {
				if err == nil {
					t.Fatalf("got value %s, want an error", v)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				if len(err.Error()) > 3000 {
					t.Errorf("error is %d bytes; stderr should be a tail", len(err.Error()))
				}
				return
			}
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			jsonEqual(t, v, tt.want)
		})
	}
}

// wantGone checks that the process whose pid a tool wrote to pidFile ended.
func wantGone(pidFile string) func(t *testing.T) {
	return func(t *testing.T) {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 0 || !gone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the tool's background process %d was left running", pid)
		}
	}
}

func TestCommandToolsNoneConfigured(t *testing.T) {
	_, err := CommandTools(nil).Call(context.Background(), Call{Name: "x", Args: []byte(`{}`)})
	var u *UnknownToolError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "pass --tool NAME=COMMAND") {
		t.Errorf("err = %v", err)
	}
}

// The command and its children are killed with their process group when the
// call's context ends.
func TestCommandToolKilledOnCancel(t *testing.T) {
	testkit.Clean(t, time.Minute)
	pids := filepath.Join(t.TempDir(), "pids")
	tools := CommandTools(map[string]string{
		"hang": `sleep 300 & echo $$ $! > ` + pids + `.tmp; mv ` + pids + `.tmp ` + pids + `; wait`,
	})
	ctx, cancel := context.WithCancelCause(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := tools.Call(ctx, Call{Name: "hang", Args: []byte(`{}`)})
		errc <- err
	}()
	var ids []int
	for ids == nil {
		if b, err := os.ReadFile(pids); err == nil {
			for _, f := range strings.Fields(string(b)) {
				n, _ := strconv.Atoi(f)
				ids = append(ids, n)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel(errCellEnded)
	err := <-errc
	if err == nil || !errors.Is(err, errCellEnded) || !strings.Contains(err.Error(), "stopped: cell ended") {
		t.Errorf("err = %v, want stopped with the cause", err)
	}
	for _, pid := range ids {
		if !gone(pid) {
			t.Errorf("process %d of the cancelled tool is still alive", pid)
		}
	}
}

// gone waits for pid to end, as a SIGKILL takes effect; the minute bounds
// a hang, not a timing.
func gone(pid int) bool { return leakcheck.Gone(pid, time.Minute) }

// alive reports a process that exists and has a thread running (as the
// bridge's own count judges it).
func alive(pid int) bool { return !proctree.Ended(pid) }

func TestParseToolFlag(t *testing.T) {
	tests := []struct {
		in, name, command, errHas string
	}{
		{"grep=rg --json", "grep", "rg --json", ""},
		{"read=cat \"$(jq -r .path)\"", "read", "cat \"$(jq -r .path)\"", ""},
		{"a=b=c", "a", "b=c", ""},
		{" x =echo", "x", "echo", ""},
		{"noequals", "", "", "want NAME=COMMAND"},
		{"=echo", "", "", "must be a Python identifier"},
		{"1x=echo", "", "", "must be a Python identifier"},
		{"my-tool=echo", "", "", "must be a Python identifier"},
		{"x=", "", "", "command after \"x\"= is empty"},
		{"x=  ", "", "", "is empty"},
		{"_private=echo", "", "", `must not start with "_"`},
		{"__init__=echo", "", "", `must not start with "_"`},
		{"class=echo", "", "", "is a Python keyword"},
		{"None=echo", "", "", "is a Python keyword"},
		{"match=echo", "match", "echo", ""}, // a soft keyword is a fine attribute
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			name, command, err := ParseToolFlag(tt.in)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("err = %v, want %q", err, tt.errHas)
				}
				return
			}
			if err != nil || name != tt.name || command != tt.command {
				t.Errorf("got %q %q %v, want %q %q", name, command, err, tt.name, tt.command)
			}
		})
	}
}

// Through the server: a command tool's failure reaches the client as ok:false.
func TestCommandToolsThroughBridge(t *testing.T) {
	b := start(t, CommandTools(map[string]string{"up": `tr a-z A-Z`, "bad": `echo nope >&2; exit 2`}), Options{})
	b.RunHook("s", "r", true)
	defer b.RunHook("s", "r", false)
	if r := b.call(t, "s", "r", "up", `{"k":"v"}`); !r.OK {
		t.Errorf("up: %s", r.raw)
	} else {
		jsonEqual(t, r.Value, `{"K":"V"}`)
	}
	if r := b.call(t, "s", "r", "bad", `{}`); r.OK || r.status != 200 || !strings.Contains(r.Error, "exited with status 2: nope") {
		t.Errorf("bad: %d %s", r.status, r.raw)
	}
}
