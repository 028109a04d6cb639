package testkit

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

func TestCollector(t *testing.T) {
	var c Collector
	for _, f := range []frames.Frame{
		{Type: frames.TypeReady, PID: 7},
		{Type: frames.TypeStdout, Data: "a"},
		{Type: frames.TypeStderr, Data: "b\n"},
		{Type: frames.TypeResult, Bundle: frames.Bundle{"text/plain": []byte(`"42"`)}},
		{Type: frames.TypeError, Ename: "E", Evalue: "v"},
		{Type: frames.TypeStdout, Data: "c\n"},
	} {
		c.Cell(0, f)
	}
	if got := c.Text(frames.TypeStdout); got != "ac\n" {
		t.Errorf("Text = %q", got)
	}
	if got, want := c.Output(), "ab\n42\nE: v\nc\n"; got != want {
		t.Errorf("Output = %q, want %q", got, want)
	}
	if got := c.PIDs(); len(got) != 1 || got[0] != 7 {
		t.Errorf("PIDs = %v", got)
	}
	if f := c.First(frames.TypeError); f == nil || f.Ename != "E" {
		t.Errorf("First(error) = %+v", f)
	}
	if f := c.First(frames.TypeDisplay); f != nil {
		t.Errorf("First(display) = %+v, want nil", f)
	}
}

func TestOnceRunsSetupOnce(t *testing.T) {
	var o Once
	runs := 0
	for range 3 {
		if skip := o.Run(func() string { runs++; return "missing" }); skip != "missing" {
			t.Errorf("Run = %q", skip)
		}
	}
	if runs != 1 {
		t.Errorf("set-up ran %d times", runs)
	}
}

func TestGoldenMatches(t *testing.T) {
	if Updating() {
		t.Skip("-update rewrites golden files; this test compares a fixed one")
	}
	path := filepath.Join(t.TempDir(), "x.golden")
	*update = true
	Golden(t, path, []byte("same\n"))
	*update = false
	Golden(t, path, []byte("same\n"))
}

func TestStartPiped(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo out; echo err >&2")
	out, stderr := StartPiped(t, cmd)
	var b strings.Builder
	buf := make([]byte, 64)
	for {
		n, err := out.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if b.String() != "out\n" || stderr.String() != "err\n" {
		t.Errorf("stdout %q stderr %q", b.String(), stderr.String())
	}
}

// fatalTB records a Fatalf (msg) or a Skip (skipped) instead of ending the
// test that holds it; both end the calling goroutine, as testing's do.
type fatalTB struct {
	testing.TB
	msg, skipped string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, a ...any) {
	f.msg = fmt.Sprintf(format, a...)
	runtime.Goexit()
}

func (f *fatalTB) Skip(a ...any) {
	f.skipped = fmt.Sprint(a...)
	runtime.Goexit()
}

// NeedModule runs a test whose module imports, and skips one whose module
// does not, naming the module, the interpreter and what to install; under
// RequireModulesEnv=1 that skip is a failure.
func TestNeedModule(t *testing.T) {
	py := Python(t)
	for _, tc := range []struct {
		name, module, require string
		skipped, failed       bool
	}{
		{name: "module imports", module: "json"},
		{name: "module imports, required", module: "json", require: "1"},
		{name: "module missing", module: "evalhost_no_such_module", skipped: true},
		{name: "module missing, required", module: "evalhost_no_such_module", require: "1", failed: true},
		{name: "module missing, requirement off", module: "evalhost_no_such_module", require: "0", skipped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(RequireModulesEnv, tc.require)
			tb := &fatalTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				NeedModule(tb, tc.module, "evalhost-no-such-package")
			}()
			<-done
			if (tb.skipped != "") != tc.skipped || (tb.msg != "") != tc.failed {
				t.Fatalf("skipped %q, failed %q; want skipped %v, failed %v", tb.skipped, tb.msg, tc.skipped, tc.failed)
			}
			for _, msg := range []string{tb.skipped, tb.msg} {
				for _, want := range []string{py, "cannot import " + tc.module, "No module named 'evalhost_no_such_module'", "pip install evalhost-no-such-package"} {
					if msg != "" && !strings.Contains(msg, want) {
						t.Errorf("%q lacks %q", msg, want)
					}
				}
			}
			if tc.failed && !strings.Contains(tb.msg, RequireModulesEnv+"=1") {
				t.Errorf("%q does not say what made it a failure", tb.msg)
			}
		})
	}
}

// Nbformat refuses a notebook nbformat would have to repair (reading it
// fixes missing and duplicate cell ids with only a warning).
func TestNbformatRefusesWhatItRepairs(t *testing.T) {
	NeedNbformat(t)
	const cell = `{"cell_type": "markdown", %s"metadata": {}, "source": []}`
	nb := func(cells ...string) []byte {
		return []byte(`{"cells": [` + strings.Join(cells, ", ") + `], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`)
	}
	tests := []struct {
		name    string
		nb      []byte
		refused bool
	}{
		{"ids", nb(fmt.Sprintf(cell, `"id": "a", `), fmt.Sprintf(cell, `"id": "b", `)), false},
		{"a missing id", nb(fmt.Sprintf(cell, `"id": "a", `), fmt.Sprintf(cell, "")), true},
		{"a duplicate id", nb(fmt.Sprintf(cell, `"id": "a", `), fmt.Sprintf(cell, `"id": "a", `)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &fatalTB{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Nbformat(tb, tt.nb)
			}()
			<-done
			if refused := tb.msg != ""; refused != tt.refused {
				t.Errorf("refused = %v (%s), want %v", refused, tb.msg, tt.refused)
			}
		})
	}
}

// PythonVersion finds the version Python runs, and none of a version that
// does not exist.
func TestPythonVersion(t *testing.T) {
	out, err := exec.Command(Python(t), "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(out))
	exe := PythonVersion(t, v)
	got, err := exec.Command(exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil || strings.TrimSpace(string(got)) != v {
		t.Errorf("PythonVersion(%q) = %s, which is %q (%v)", v, exe, got, err)
	}
	if path, err := findVersion("3.99"); err == nil || !strings.Contains(err.Error(), "python3.99") {
		t.Errorf("findVersion(3.99) = %q, %v; want an error naming python3.99", path, err)
	}
}

// WaitParked returns once a goroutine is blocked in the function named,
// on the receive named with it, not before.
func TestWaitParked(t *testing.T) {
	var reached atomic.Bool
	release, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); parkedHere(&reached, release) }()
	WaitParked(t, "testkit.parkedHere(", "[chan receive")
	if !reached.Load() {
		t.Error("WaitParked returned before the goroutine reached parkedHere")
	}
	close(release)
	<-done
}

//go:noinline
func parkedHere(reached *atomic.Bool, release chan struct{}) {
	reached.Store(true)
	<-release
}
