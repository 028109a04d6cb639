package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/evalhost/evalhost/frames"
)

// An interrupt can land in ipykernel's handling of the request outside the
// cell's code, where IPython does not catch it (the input transformers
// ipykernel runs first): ipykernel then logs "KeyboardInterrupt caught in
// kernel" and sends no execute_reply, only the idle status. The cell still
// ends interrupted, as one interrupted in its code does, and the kernel
// keeps its state. Each cell prints "hook" and waits there for the
// interrupt.
func TestInterruptOutsideTheCellsCode(t *testing.T) {
	const wait = "print('hook', flush=True)\nimport time; time.sleep(60)"
	cases := []struct {
		name, setup, code string
	}{
		{"in the code", "", wait},
		{"before the code: an input transformer", "def hook(lines):\n    get_ipython().input_transformers_post.remove(hook)\n" +
			"    " + strings.ReplaceAll(wait, "\n", "\n    ") + "\nget_ipython().input_transformers_post.append(hook)", "print('not reached')"},
	}
	want := []string{"started", "stdout:hook\n", "error:KeyboardInterrupt:", "done:error:cancelled"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := ownKernel(t, KernelOptions{Grace: 10 * time.Second})
			if got, _, err := run(t, k, context.Background(), frames.Request{ID: "setup", Code: "kept = 1\n" + tc.setup}); err != nil ||
				strings.Join(got, ",") != "started,done:ok" {
				t.Fatalf("setup: %q, %v", got, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []string
			done, err := k.Execute(ctx, frames.Request{ID: "outside", Code: tc.code}, func(f frames.Frame) {
				if f.Type == frames.TypeStdout && f.Data == "hook\n" {
					cancel()
				}
				got = append(got, summary(f))
			})
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			got = joinStreams(append(got, summary(done)))
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("frames:\n got %q\nwant %q", got, want)
			}
			if got, _, err := run(t, k, context.Background(), frames.Request{ID: "after", Code: "kept"}); err != nil ||
				strings.Join(got, ",") != "started,result:1,done:ok" {
				t.Errorf("the next cell: %q, %v; want the kernel's state", got, err)
			}
		})
	}
}

// A cell's idle may come before its execute_reply (they travel on
// different channels), or with no reply at all: the marker on shell tells
// which, and a cell without a reply ends with a warning instead of a hang.
func TestFakeIdleBeforeReply(t *testing.T) {
	const (
		busy  = `{"execution_state":"busy"}`
		idle  = `{"execution_state":"idle"}`
		input = `{"code":"","execution_count":1}`
	)
	type msg = struct{ typ, content string }
	cases := []struct {
		name string
		msgs []msg
		want []string
	}{
		{"the reply after the idle",
			[]msg{{"status", busy}, {"execute_input", input}, {"status", idle}, {"execute_reply", `{"status":"ok","execution_count":1}`}},
			[]string{"started", "done:ok"}},
		{"no reply",
			[]msg{{"status", busy}, {"execute_input", input}, {"status", idle}},
			[]string{"started", "warning:the kernel ended the cell without an execute_reply (an exception in ipykernel's own handling " +
				"of the request: the kernel's log says which)", "done:error"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := fakeKernel(t, tc.msgs, false)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, _, err := run(t, k, ctx, frames.Request{ID: "c", Code: "1"})
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("frames:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// Idle overtakes execute_reply routinely (they travel on different
// channels); without an interrupt no marker goes out for it, where one went
// out for every such cell. After the first cell, the fake reads the next
// request itself: a marker, or the second cell's execute_request.
func TestFakeNoMarkerWithoutInterrupt(t *testing.T) {
	const (
		busy  = `{"execution_state":"busy"}`
		idle  = `{"execution_state":"idle"}`
		input = `{"code":"","execution_count":1}`
		reply = `{"status":"ok","execution_count":1}`
	)
	write := func(ctx context.Context, conn *websocket.Conn, parent string, msgs ...[2]string) error {
		for _, m := range msgs {
			if err := conn.Write(ctx, websocket.MessageText, jupyterMessage(m[0], parent, []byte(m[1]))); err != nil {
				return err
			}
		}
		return nil
	}
	var markers atomic.Int32
	k := scriptedKernel(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
		if err := write(ctx, conn, parent, [2]string{"status", busy}, [2]string{"execute_input", input},
			[2]string{"status", idle}, [2]string{"execute_reply", reply}); err != nil {
			return err
		}
		_, raw, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		var next message
		_ = json.Unmarshal(raw, &next)
		switch next.Header.MsgType {
		case "kernel_info_request":
			markers.Add(1)
			return answerInfo(ctx, conn, next.Header.MsgID)
		case "execute_request":
			return write(ctx, conn, next.Header.MsgID, [2]string{"status", busy}, [2]string{"execute_input", input},
				[2]string{"execute_reply", reply}, [2]string{"status", idle})
		}
		return nil
	}, nil)
	for _, id := range []string{"first", "second"} {
		got, _, err := run(t, k, context.Background(), frames.Request{ID: id, Code: "1"})
		if err != nil || strings.Join(got, ",") != "started,done:ok" {
			t.Fatalf("%s cell: %q, %v", id, got, err)
		}
	}
	if n := markers.Load(); n != 0 {
		t.Errorf("%d markers sent for a reply that came after the idle, want none", n)
	}
}
