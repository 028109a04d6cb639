package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/evalhost/evalhost/gateway/shared"
	"github.com/evalhost/evalhost/sessions"
)

// only limits the steps measured (-only).
var only string

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "evalbench %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func main() {
	if ran, err := relayMain(os.Args[1:]); ran {
		if err != nil {
			fmt.Fprintln(os.Stderr, "evalbench:", err)
			os.Exit(1)
		}
		return
	}
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: evalbench [flags]\n       evalbench %s [-python P]  (the two-hop floor, relay.go)\n", relayCmd)
		flag.PrintDefaults()
	}
	python := flag.String("python", "python3", "interpreter; resolved to its real executable (sys.executable) first")
	evalhost := flag.String("evalhost", "", "evalhost binary for the serve figures (empty: skip serve)")
	runs := flag.Int("runs", 10, "repetitions per figure (round trips: 100x this)")
	floodMiB := flag.Int("flood-mib", 1024, "MiB printed for the host-memory figure")
	out := flag.String("out", "", "write the JSON here (default stdout)")
	gw := flag.Bool("gateway", false, "also measure the gateway backend (Jupyter kernels behind a local kernel gateway)")
	flag.StringVar(&only, "only", "", "measure only the figures whose step names contain this (e.g. \"round trip\"); for A/B checks")
	flag.Parse()
	if err := run(*python, *evalhost, *gw, *runs, *floodMiB, *out); err != nil {
		fmt.Fprintln(os.Stderr, "evalbench:", err)
		os.Exit(1)
	}
}

// results is what evalbench writes.
type results struct {
	Python        string             `json:"python"`
	PythonVersion string             `json:"pythonVersion"`
	Go            string             `json:"go"`
	Runs          int                `json:"runs"`
	FloodMiB      int                `json:"floodMiB"`
	Figures       map[string]float64 `json:"figures"`
	// Errors of optional targets (serve, gateway) that could not be measured.
	Errors map[string]string `json:"errors,omitempty"`
}

func run(python, evalhost string, gw bool, runs, floodMiB int, outPath string) error {
	exe, version, err := resolve(python)
	if err != nil {
		return err
	}
	res := results{Python: exe, PythonVersion: version, Go: runtime.Version(), Runs: runs, FloodMiB: floodMiB, Figures: map[string]float64{}}
	logf("%s (%s)", exe, version)
	if err := measureAPI(exe, runs, floodMiB, res.Figures); err != nil {
		return err // the runner backend is what this benchmark is for
	}
	// The optional targets are reported, not fatal: the table says why a
	// column is empty.
	res.Errors = map[string]string{}
	if evalhost != "" {
		if err := measureServe(evalhost, exe, runs, floodMiB, res.Figures); err != nil {
			logf("serve: %v", err)
			res.Errors["serve"] = err.Error()
		}
	}
	if gw {
		if err := measureGateway(exe, runs, floodMiB, res.Figures); err != nil {
			logf("gateway: %v", err)
			res.Errors["gateway"] = err.Error()
		}
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if outPath == "" {
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	}
	return os.WriteFile(outPath, append(b, '\n'), 0o644)
}

// resolve turns a name or a version-manager shim into the real executable,
// so every figure (and the anchor) starts the same binary.
func resolve(python string) (exe, version string, err error) {
	b, err := exec.Command(python, "-c", "import sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])").Output()
	if err != nil {
		return "", "", fmt.Errorf("python %q does not run: %w", python, err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != 2 {
		return "", "", fmt.Errorf("python %q: unexpected answer %q", python, b)
	}
	return lines[0], lines[1], nil
}

func measureAPI(python string, runs, floodMiB int, out map[string]float64) error {
	home, err := os.MkdirTemp("", "evalbench-api-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	t := newAPITarget(python, home, 16, nil)
	defer t.reg.Close()
	return (&measurer{t: t, python: python, runs: runs, out: out, pre: "api_"}).all(floodMiB)
}

// measureGateway runs the same figures with Python cells in Jupyter kernels
// behind the shared local kernel gateway evalhost starts under its home.
func measureGateway(python string, runs, floodMiB int, out map[string]float64) error {
	home, err := os.MkdirTemp("", "evalbench-gw-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := shared.Stop(ctx, home); err != nil {
			logf("gateway: stop: %v", err)
		}
	}()
	starters := map[string]sessions.Starter{
		sessions.LangPython: sessions.GatewayStarter(sessions.GatewayConfig{Home: home}),
		sessions.LangShell:  sessions.ShellStarter(),
	}
	t := newAPITarget(python, home, 16, starters)
	defer t.reg.Close()
	return (&measurer{t: t, python: python, runs: runs, out: out, pre: "gw_"}).all(floodMiB)
}

func measureServe(bin, python string, runs, floodMiB int, out map[string]float64) error {
	home, err := os.MkdirTemp("", "evalbench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	c, err := startServe(bin, python, home, 16)
	if err != nil {
		return err
	}
	merr := (&measurer{t: &serveTarget{c: c}, python: python, runs: runs, out: out, pre: "serve_"}).all(floodMiB)
	if cerr := c.close(); merr == nil && cerr != nil {
		merr = fmt.Errorf("serve shutdown: %w", cerr)
	}
	return merr
}
