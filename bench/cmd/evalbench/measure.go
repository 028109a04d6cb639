package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evalhost/evalhost/internal/heappeak"
)

// measurer runs every figure against one target, writing into out with a
// prefix ("api_", "serve_").
type measurer struct {
	t      target
	python string // the same resolved binary, for interleaved anchors
	runs   int
	out    map[string]float64
	pre    string
}

func (m *measurer) set(name string, v float64) { m.out[m.pre+name] = v }

// ok runs a cell that must end with want.
func (m *measurer) ok(session, mode, code string, want string, interrupt bool, on func(event)) error {
	st, err := m.t.run(session, mode, code, interrupt, on)
	if err != nil {
		return fmt.Errorf("cell %q: %w", firstLine(code), err)
	}
	if st != want {
		return fmt.Errorf("cell %q ended %s, want %s", firstLine(code), st, want)
	}
	return nil
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func (m *measurer) all(floodMiB int) error {
	steps := []struct {
		name string
		fn   func() error
	}{
		{"cold start", m.coldStart},
		{"round trip", m.roundTrip},
		{"throughput", m.throughput},
		{"print loop", m.printLoop},
		{"interrupt", m.interrupt},
		{"death", m.death},
		{"16 sessions x 200 cells", m.multi},
		{fmt.Sprintf("flood %d MiB", floodMiB), func() error { return m.flood(floodMiB) }},
	}
	// A failed figure is reported and the others still measured: one
	// backend bug should not blank a whole column.
	var errs []error
	for _, s := range steps {
		if only != "" && !strings.Contains(s.name, only) {
			continue
		}
		logf("%s%s", m.pre, s.name)
		if err := s.fn(); err != nil {
			errs = append(errs, fmt.Errorf("%s%s: %w", m.pre, s.name, err))
		}
	}
	return errors.Join(errs...)
}

// interruptAfter is how long after a cell's started frame the interrupt
// figure cancels it: long enough for the cell to block in its sleep, which
// is what the row measures (a started frame may come before the cell's
// code runs, or, held by the runner, after it blocked).
const interruptAfter = 20 * time.Millisecond

// interruptSent is the event a target reports when it sends the cancel.
const interruptSent = "interrupt_sent"

// interruptLater runs cancel interruptAfter from now, reporting the moment.
func interruptLater(cancel func(), on func(event)) {
	time.AfterFunc(interruptAfter, func() {
		if on != nil {
			on(event{typ: interruptSent, at: time.Now()})
		}
		cancel()
	})
}

// coldStart: a per-call request of 1+1, from sending it to its result.
// Each run is followed by the anchor, python -c pass, so both see the same
// load on a noisy machine.
func (m *measurer) coldStart() error {
	var ds, pass []time.Duration
	for i := range m.runs + 1 {
		var got time.Time
		start := time.Now()
		err := m.ok("cold", "per-call", "1+1", "ok", false, func(e event) {
			if e.typ == "result" && got.IsZero() {
				got = e.at
			}
		})
		if err != nil {
			return err
		}
		if got.IsZero() {
			return fmt.Errorf("no result frame")
		}
		if i == 0 {
			continue // the first resolves the interpreter and writes the runner
		}
		ds = append(ds, got.Sub(start))
		d, err := runBare(m.python, "pass")
		if err != nil {
			return err
		}
		pass = append(pass, d)
	}
	m.set("cold_start_ms", ms(median(ds)))
	m.set("python_c_pass_ms", ms(median(pass)))
	return nil
}

func (m *measurer) roundTrip() error {
	if err := m.ok("warm", "", "0", "ok", false, nil); err != nil {
		return err
	}
	fl, err := startFloor(m.python)
	if err != nil {
		return err
	}
	defer fl.close()
	relay, err := startRelayFloor(m.python)
	if err != nil {
		return err
	}
	defer relay.close()
	for _, f := range []*floor{fl, relay} {
		if _, err := f.roundTrip("0"); err != nil {
			return err
		}
	}
	// Each evalhost round trip is followed by one of the floor loop and one
	// of the relay floor, so all three see the same load.
	var ds, floor, relayed []time.Duration
	for range m.runs * 100 {
		start := time.Now()
		if err := m.ok("warm", "", "1+1", "ok", false, nil); err != nil {
			return err
		}
		ds = append(ds, time.Since(start))
		d, err := fl.roundTrip("1+1")
		if err != nil {
			return err
		}
		floor = append(floor, d)
		if d, err = relay.roundTrip("1+1"); err != nil {
			return err
		}
		relayed = append(relayed, d)
	}
	m.set("rtt_p50_ms", ms(quantile(ds, 0.5)))
	m.set("rtt_p90_ms", ms(quantile(ds, 0.9)))
	m.set("rtt_floor_p50_ms", ms(quantile(floor, 0.5)))
	m.set("rtt_floor_p90_ms", ms(quantile(floor, 0.9)))
	m.set("rtt_relay_floor_p50_ms", ms(quantile(relayed, 0.5)))
	m.set("rtt_relay_floor_p90_ms", ms(quantile(relayed, 0.9)))
	return nil
}

// throughput prints 20 MiB in 64 KiB writes, counting what arrives.
func (m *measurer) throughput() error {
	const blocks = 320
	var rates []float64
	for range m.runs {
		n, other := 0, ""
		start := time.Now()
		err := m.ok("warm", "", fmt.Sprintf(bulk, blocks), "ok", false, func(e event) {
			n += len(e.data)
			// Only the first byte is looked at: scanning every chunk cost the
			// client as much as the host (Jupyter's side only counts).
			if len(e.data) > 0 && e.data[0] != 'x' && e.data[0] != '\n' && len(other) < 300 {
				other += e.data
			}
		})
		if err != nil {
			return err
		}
		el := time.Since(start)
		if n != blocks<<16 {
			return fmt.Errorf("streamed %d bytes, want %d; other text: %q", n, blocks<<16, other)
		}
		rates = append(rates, float64(n)/1e6/el.Seconds())
	}
	m.set("throughput_mb_s", medianF(rates))
	return nil
}

// printLoop alternates with its anchor, the same loop to /dev/null timed
// inside the interpreter (its start left out, as a warm cell leaves it out).
func (m *measurer) printLoop() error {
	want := 0
	for i := range 300000 {
		want += len(strconv.Itoa(i)) + 1
	}
	var ds, null []time.Duration
	for range max(m.runs/2, 3) {
		n := 0
		start := time.Now()
		if err := m.ok("warm", "", printLoop, "ok", false, func(e event) { n += len(e.data) }); err != nil {
			return err
		}
		ds = append(ds, time.Since(start))
		if n != want {
			return fmt.Errorf("print loop streamed %d bytes, want %d", n, want)
		}
		d, err := runTimed(m.python, printLoop)
		if err != nil {
			return err
		}
		null = append(null, d)
	}
	m.set("print_loop_ms", ms(median(ds)))
	m.set("print_loop_devnull_ms", ms(median(null)))
	return nil
}

// interrupt: from the started frame (when the cancel is sent) to the end.
// interrupt: from the cancel to the cell's end, the cell blocked in
// time.sleep (the cancel goes interruptAfter after its started frame).
func (m *measurer) interrupt() error {
	var ds []time.Duration
	for range m.runs {
		var (
			mu   sync.Mutex
			sent time.Time
		)
		err := m.ok("warm", "", "import time\ntime.sleep(100)", "cancelled", true, func(e event) {
			if e.typ == interruptSent {
				mu.Lock()
				sent = e.at
				mu.Unlock()
			}
		})
		end := time.Now()
		if err != nil {
			return err
		}
		mu.Lock()
		ds = append(ds, end.Sub(sent))
		mu.Unlock()
	}
	m.set("interrupt_ms", ms(median(ds)))
	return nil
}

// death: from the cell's last act before SIGKILL (a timestamp it writes to
// a file) to the host's notice that the interpreter died.
func (m *measurer) death() error {
	dir, err := os.MkdirTemp("", "evalbench-death-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	stampFile := filepath.Join(dir, "stamp")
	var ds []time.Duration
	for range m.runs {
		os.Remove(stampFile)
		var noticed time.Time
		err := m.ok("death", "", fmt.Sprintf(deathCell, stampFile), "killed", false, func(e event) {
			if e.typ == "stderr" && noticed.IsZero() && strings.Contains(e.data, "interpreter died") {
				noticed = e.at
			}
		})
		if err != nil {
			return err
		}
		b, err := os.ReadFile(stampFile)
		if err != nil {
			return fmt.Errorf("no timestamp: %w", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || noticed.IsZero() {
			return fmt.Errorf("timestamp %q (%v) or no death notice", b, err)
		}
		ds = append(ds, noticed.Sub(time.Unix(0, ns)))
	}
	m.set("death_noticed_ms", ms(median(ds)))
	return nil
}

// multi: 16 warm sessions run 200 cells each, all at once.
func (m *measurer) multi() error {
	const sessionsN, cells = 16, 200
	pids := make([]int, sessionsN)
	for i := range sessionsN {
		err := m.ok("multi"+strconv.Itoa(i), "", "x = 0", "ok", false, func(e event) {
			if e.typ == "ready" {
				pids[i] = e.pid
			}
		})
		if err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, sessionsN)
	start := time.Now()
	for i := range sessionsN {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range cells {
				if err := m.ok("multi"+strconv.Itoa(i), "", "x = "+strconv.Itoa(j)+"\nx", "ok", false, nil); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	var rss []float64
	for _, pid := range pids {
		if r, err := procStatus(pid, "VmRSS"); err == nil {
			rss = append(rss, r)
		}
	}
	host, _ := procStatus(m.t.hostPID(), "VmRSS")
	m.set("multi_cells_per_s", sessionsN*cells/el.Seconds())
	m.set("multi_host_rss_mb", host)
	m.set("multi_interpreter_rss_mb", medianF(rss))
	for i := range sessionsN {
		m.t.closeSession("multi" + strconv.Itoa(i))
	}
	return nil
}

// flood prints floodMiB through a session whose output spills to an
// artifact, and reads the host's resident peak (VmHWM, reset before).
func (m *measurer) flood(floodMiB int) error {
	pid := m.t.hostPID()
	peakOK := resetPeak(pid)
	before, _ := procStatus(pid, "VmRSS")
	// The Go heap is only ours to sample when the host is this process.
	var heap *heappeak.Sampler
	if pid == os.Getpid() {
		heap = heappeak.Start()
	}
	n := 0
	start := time.Now()
	err := m.ok("flood", "", fmt.Sprintf(bulk, floodMiB*16), "ok", false, func(e event) { n += len(e.data) })
	el := time.Since(start)
	var growth uint64
	if heap != nil {
		growth = heap.Stop()
	}
	if err != nil {
		return err
	}
	if n != floodMiB<<20 {
		return fmt.Errorf("flood streamed %d bytes, want %d", n, floodMiB<<20)
	}
	m.set("flood_mb_s", float64(n)/1e6/el.Seconds())
	m.set("flood_host_rss_before_mb", before)
	if hwm, err := procStatus(pid, "VmHWM"); err == nil && peakOK {
		m.set("flood_host_peak_rss_mb", hwm)
	}
	if heap != nil {
		m.set("flood_host_heap_growth_mb", float64(growth)/1e6)
	}
	m.t.closeSession("flood")
	return nil
}
