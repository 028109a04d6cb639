package gateway

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/heappeak"
	"github.com/evalhost/evalhost/streamsink"
)

// bigContents are the large messages a cell can make: a display of a long
// text (a JSON string without escapes, handed on as it came) and a stream
// text of short lines (escapes, which decoding must undo). The start
// snippet bounds a real kernel's stream messages, not a display's.
var bigContents = []struct {
	name, typ string
	content   func(n int) []byte
	size      func(f frames.Frame) int
}{
	{"display", "display_data", func(n int) []byte {
		b := append([]byte(`{"data":{"text/plain":"`), bytes.Repeat([]byte("y"), n)...)
		return append(b, `"},"metadata":{},"transient":{}}`...)
	}, func(f frames.Frame) int { return len(f.Bundle["text/plain"]) - 2 }},
	{"stream", "stream", func(n int) []byte {
		line := strings.Repeat("x", 98) + `\n` // 99 characters
		b := append([]byte(`{"name":"stdout","text":"`), bytes.Repeat([]byte(line), n/len(line))...)
		return append(b, `"}`...)
	}, func(f frames.Frame) int { return len(f.Data) * 100 / 99 }},
}

// memoryPeak measures one cell that receives one message of about n bytes:
// how far the Go heap (sampled, and read as the frame is in hand) and the
// process's resident set rose, as multiples of n.
func memoryPeak(b *testing.B, n int, size func(frames.Frame) int, cell func(emit func(frames.Frame)) error) (heapX, rssX float64) {
	b.Helper()
	debug.FreeOSMemory()
	rssOK := heappeak.ResetRSSPeak()
	rss0, _ := heappeak.RSSPeak()
	hp := heappeak.Start()
	got := 0
	err := cell(func(f frames.Frame) {
		if s := size(f); s > n/2 {
			got = s
			hp.Sample()
		}
	})
	heap := hp.Stop()
	if err != nil {
		b.Fatal(err)
	}
	if got < n*9/10 {
		b.Fatalf("the large frame did not arrive whole: %d of about %d bytes", got, n)
	}
	rss1, _ := heappeak.RSSPeak()
	if !rssOK {
		rss1 = rss0
	}
	return float64(heap) / float64(n), float64(rss1-rss0) / float64(n)
}

// BenchmarkBigMessageMemory reports heap_x and rss_x: the peak growth of
// the heap and of the resident set while one message of n bytes arrives
// from a fake gateway and is handed on, as multiples of n.
func BenchmarkBigMessageMemory(b *testing.B) { bigMessageMemory(b, false) }

// BenchmarkBigMessageMemorySink is BenchmarkBigMessageMemory with every
// frame passed through a streamsink.Sink as a session passes a cell's
// (default bounds, a store): what the message costs evalhost end to end.
func BenchmarkBigMessageMemorySink(b *testing.B) { bigMessageMemory(b, true) }

func bigMessageMemory(b *testing.B, sink bool) {
	for _, tc := range bigContents {
		for _, n := range []int{100e6, 200e6} {
			b.Run(fmt.Sprintf("%s/%dMB", tc.name, n/1e6), func(b *testing.B) {
				big := jupyterMessage(tc.typ, strings.Repeat("0", 32), tc.content(n))
				k := scriptedKernel(b, func(ctx context.Context, conn *websocket.Conn, parent string) error {
					copy(big[parentAt:], parent)
					for _, m := range [][]byte{big, jupyterMessage("execute_reply", parent, []byte(`{"status":"ok","execution_count":1}`)),
						jupyterMessage("status", parent, []byte(`{"execution_state":"idle"}`))} {
						if err := conn.Write(ctx, websocket.MessageText, m); err != nil {
							return err
						}
					}
					return nil
				}, nil)
				run := func(emit func(frames.Frame)) error {
					_, err := k.Execute(context.Background(), frames.Request{ID: "big", Code: "big"}, emit)
					return err
				}
				reportPeaks(b, n, tc.size, func(emit func(frames.Frame)) error {
					if sink {
						return throughSink(b, emit, run)
					}
					return run(emit)
				})
			})
		}
	}
}

// throughSink runs cell with its frames passed through a new sink before
// emit, and closes the sink; its store is on tmpfs where there is one, so
// the artifact's pages are not the process's.
func throughSink(b *testing.B, emit func(frames.Frame), cell func(emit func(frames.Frame)) error) error {
	dir, err := os.MkdirTemp("/dev/shm", "gateway-bench-")
	if err != nil {
		dir = b.TempDir()
	}
	defer os.RemoveAll(dir)
	s, err := streamsink.New(streamsink.Options{Store: streamsink.NewStore(dir)})
	if err != nil {
		return err
	}
	err = cell(func(f frames.Frame) { emit(s.Frame(f)) })
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// BenchmarkBigMessageMemoryReal is BenchmarkBigMessageMemory with a real
// kernel behind the real gateway displaying n bytes of text.
func BenchmarkBigMessageMemoryReal(b *testing.B) { bigMessageMemoryReal(b, false) }

// BenchmarkBigMessageMemoryRealSink is BenchmarkBigMessageMemoryReal
// through a sink, as BenchmarkBigMessageMemorySink.
func BenchmarkBigMessageMemoryRealSink(b *testing.B) { bigMessageMemoryReal(b, true) }

func bigMessageMemoryReal(b *testing.B, sink bool) {
	// The gateway decodes and encodes such a message for seconds before
	// it sends a byte, longer than idleWait: that is not measured here.
	defer func(old time.Duration) { idleWait = old }(idleWait)
	idleWait = time.Minute
	k := ownKernel(b, KernelOptions{})
	for _, n := range []int{100e6, 200e6} {
		b.Run(fmt.Sprintf("display/%dMB", n/1e6), func(b *testing.B) {
			code := fmt.Sprintf("display({'text/plain': 'y' * %d}, raw=True)", n)
			run := func(emit func(frames.Frame)) error {
				_, err := k.Execute(context.Background(), frames.Request{ID: "big", Code: code}, emit)
				return err
			}
			reportPeaks(b, n, bigContents[0].size, func(emit func(frames.Frame)) error {
				if sink {
					return throughSink(b, emit, run)
				}
				return run(emit)
			})
		})
	}
}

func reportPeaks(b *testing.B, n int, size func(frames.Frame) int, cell func(emit func(frames.Frame)) error) {
	var heapX, rssX float64
	for range b.N {
		h, r := memoryPeak(b, n, size, cell)
		heapX, rssX = max(heapX, h), max(rssX, r)
	}
	b.ReportMetric(heapX, "heap_x")
	b.ReportMetric(rssX, "rss_x")
}

// A large message arriving over a slow link, for longer than the ping
// timeout or the idle wait, is a gateway that is still sending, as is one
// that is busy with it (decoding and encoding it) for longer than the idle
// wait before it sends a byte: the cell gets it whole, with no reconnect or
// idle warning.
func TestSlowLargeMessageIsNotSilence(t *testing.T) {
	const n = 2 << 20 // about 1.3 s at slowLink's pace
	cases := []struct {
		name                   string
		pingEvery, pingTimeout time.Duration
		idleWait               time.Duration
		replyFirst             bool
		busy                   time.Duration // before the message, answering nothing
		slowLink               bool
	}{
		{"slower than the ping timeout", 100 * time.Millisecond, 300 * time.Millisecond, time.Minute, false, 0, true},
		{"after the reply, slower than the idle wait", time.Minute, time.Minute, 300 * time.Millisecond, true, 0, true},
		{"after the reply, busy longer than the idle wait", time.Minute, time.Minute, 300 * time.Millisecond, true, time.Second, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := [...]time.Duration{pingEvery, pingTimeout, reconnectFor, idleWait}
			pingEvery, pingTimeout, reconnectFor, idleWait = tc.pingEvery, tc.pingTimeout, time.Second, tc.idleWait
			t.Cleanup(func() { pingEvery, pingTimeout, reconnectFor, idleWait = old[0], old[1], old[2], old[3] })
			var slow atomic.Bool
			k := scriptedKernel(t, func(ctx context.Context, conn *websocket.Conn, parent string) error {
				reply := jupyterMessage("execute_reply", parent, []byte(`{"status":"ok","execution_count":1}`))
				big := jupyterMessage("display_data", parent, bigContents[0].content(n))
				msgs := [][]byte{big, reply}
				if tc.replyFirst {
					msgs = [][]byte{reply, big}
				}
				for _, m := range append(msgs, jupyterMessage("status", parent, []byte(`{"execution_state":"idle"}`))) {
					if len(m) > n {
						time.Sleep(tc.busy) // not reading: a ping goes unanswered
					}
					slow.Store(tc.slowLink && len(m) > n)
					if err := conn.Write(ctx, websocket.MessageText, m); err != nil {
						return err
					}
				}
				slow.Store(false)
				return nil
			}, &slow)
			wantOneDisplay(t, k, frames.Request{ID: "slow", Code: "display(big)"}, n)
		})
	}
}

// The real gateway decodes and encodes a large display for a while before
// it sends a byte of it, and the kernel's reply overtakes it: that silence,
// longer than the idle wait (made short here), is a busy gateway, not a
// dropped idle status. So is the time the kernel takes to hand the display
// to the gateway, which meanwhile, idle, answers a ping at once (with a
// ping alone this failed under load: CI 3 of 3, 2 of 5 here on one busy
// core): the idle watch's marker comes after the display, whenever it does.
// The marker's own messages are no frames of the next cell.
func TestLargeDisplayAfterTheReplyArrives(t *testing.T) {
	defer func(old time.Duration) { idleWait = old }(idleWait)
	idleWait = 100 * time.Millisecond
	k := ownKernel(t, KernelOptions{})
	const n = 50_000_000
	wantOneDisplay(t, k, frames.Request{ID: "big", Code: fmt.Sprintf("display({'text/plain': 'y' * %d}, raw=True)", n)}, n)
	got, _, err := run(t, k, context.Background(), frames.Request{ID: "next", Code: "print('next')"})
	if want := []string{"started", "stdout:next\n", "done:ok"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("next cell: %q, %v; want %q", got, err, want)
	}
}

// wantOneDisplay runs req and wants it ok with one display of n bytes.
func wantOneDisplay(t *testing.T, k *Kernel, req frames.Request, n int) {
	t.Helper()
	var got []string
	done, err := k.Execute(context.Background(), req, func(f frames.Frame) {
		s := summary(f)
		if f.Type == frames.TypeDisplay {
			s = fmt.Sprintf("display of %d bytes", bigContents[0].size(f))
		}
		got = append(got, s)
	})
	want := []string{"started", fmt.Sprintf("display of %d bytes", n)}
	if err != nil || done.Status != frames.StatusOK || !slices.Equal(got, want) {
		t.Errorf("Execute = %+v, %v; frames %.600q; want %q and ok", done, err, got, want)
	}
}
