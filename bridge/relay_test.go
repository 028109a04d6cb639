package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// sent is one tool_call a fake serve client received.
type sent struct {
	id string
	c  Call
}

func TestRelayThroughBridge(t *testing.T) {
	calls := make(chan sent, 10)
	var mu sync.Mutex
	var abandoned []string
	relay := NewRelay(func(id string, c Call) error { calls <- sent{id, c}; return nil },
		func(id string) { mu.Lock(); abandoned = append(abandoned, id); mu.Unlock() })
	b := start(t, relay, Options{})
	b.TrackRun(Run{Session: "s1", ID: "r1", Request: "req7", Cell: 2}, true)

	// The fake client answers in the background, as serve's stdin reader would.
	answers := map[string]func(string) error{
		"ok":      func(id string) error { return relay.Resolve(id, true, json.RawMessage(`{"text":"hi"}`), "") },
		"fail":    func(id string) error { return relay.Resolve(id, false, nil, "permission denied") },
		"nothing": func(id string) error { return relay.Resolve(id, true, nil, "") },
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for s := range calls {
			if s.c.Request != "req7" || s.c.Cell != 2 {
				t.Errorf("call %s = %+v, want request req7, cell 2 as tracked", s.id, s.c)
			}
			if s.c.Name == "hang" {
				continue
			}
			if err := answers[s.c.Name](s.id); err != nil {
				t.Errorf("Resolve %s: %v", s.id, err)
			}
		}
	})
	defer wg.Wait()
	defer close(calls)

	tests := []struct {
		name, tool string
		ok         bool
		value      string
		errHas     string
	}{
		{"value", "ok", true, `{"text":"hi"}`, ""},
		{"error", "fail", false, "", "permission denied"},
		{"empty value is null", "nothing", true, "null", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.call(t, "s1", "r1", tt.tool, `{"a":1}`)
			if r.OK != tt.ok {
				t.Fatalf("got %s", r.raw)
			}
			if tt.ok {
				jsonEqual(t, r.Value, tt.value)
			} else if !strings.Contains(r.Error, tt.errHas) {
				t.Errorf("error %q lacks %q", r.Error, tt.errHas)
			}
		})
	}

	got := make(chan reply, 1)
	go func() { got <- b.call(t, "s1", "r1", "hang", `{}`) }()
	for relay.Pending() == 0 {
		time.Sleep(time.Millisecond)
	}
	b.RunHook("s1", "r1", false)
	if r := <-got; r.status != 409 || !strings.Contains(r.Error, "cell ended") {
		t.Errorf("abandoned call: %d %s", r.status, r.raw)
	}
	for relay.Pending() != 0 {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	if len(abandoned) != 1 {
		t.Errorf("abandoned = %v, want the hanging call", abandoned)
	}
	id := abandoned[0]
	mu.Unlock()
	if err := relay.Resolve(id, true, json.RawMessage(`1`), ""); !errors.Is(err, ErrNotPending) {
		t.Errorf("late answer: %v, want ErrNotPending", err)
	}
}

func TestRelayResolveErrors(t *testing.T) {
	ids := make(chan string, 1)
	relay := NewRelay(func(id string, c Call) error { ids <- id; return nil }, nil)
	done := make(chan error, 1)
	go func() {
		_, err := relay.Call(context.Background(), Call{Name: "x"})
		done <- err
	}()
	id := <-ids
	tests := []struct {
		name, id string
		value    string
		want     string
	}{
		{"unknown id", "c999", `1`, "not pending"},
		{"invalid JSON", id, `{`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := relay.Resolve(tt.id, true, json.RawMessage(tt.value), ""); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if err := relay.Resolve(id, false, nil, ""); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || err.Error() != "tool failed without a message" {
		t.Errorf("Call err = %v", err)
	}
	if err := relay.Resolve(id, true, nil, ""); !errors.Is(err, ErrNotPending) {
		t.Errorf("second answer: %v", err)
	}
}

func TestRelaySendFails(t *testing.T) {
	relay := NewRelay(func(string, Call) error { return errors.New("stdout closed") }, nil)
	_, err := relay.Call(context.Background(), Call{Name: "x"})
	if err == nil || !strings.Contains(err.Error(), `cannot pass tool "x" to the client: stdout closed`) || relay.Pending() != 0 {
		t.Errorf("err = %v, pending %d", err, relay.Pending())
	}
}

// Close fails the calls waiting for an answer and every later one with its
// error, untouched, and without abandoning them to the client.
func TestRelayClose(t *testing.T) {
	ids := make(chan string, 1)
	relay := NewRelay(func(id string, _ Call) error { ids <- id; return nil },
		func(id string) { t.Errorf("call %s abandoned by Close", id) })
	stopped := errors.New("the client stopped reading")
	call := Call{Session: "s", Run: "r", Name: "x"}
	done := make(chan error, 1)
	go func() {
		_, err := relay.Call(context.Background(), call)
		done <- err
	}()
	id := <-ids
	relay.Close(stopped)
	relay.Close(errors.New("second close"))
	if err := <-done; err != stopped {
		t.Errorf("pending call: %v, want %v", err, stopped)
	}
	if _, err := relay.Call(context.Background(), call); err != stopped {
		t.Errorf("call after Close: %v, want %v", err, stopped)
	}
	if err := relay.Resolve(id, true, nil, ""); !errors.Is(err, ErrNotPending) {
		t.Errorf("answer after Close: %v, want ErrNotPending", err)
	}
	if n := relay.Pending(); n != 0 {
		t.Errorf("%d calls pending after Close", n)
	}
}
