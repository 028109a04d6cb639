package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	evalhost := flag.String("evalhost", "bin/evalhost", "the evalhost binary")
	python := flag.String("python", "python3", "the interpreter name a user types (resolved on PATH, a shim or not)")
	runs := flag.Int("runs", 30, "rounds; each runs every target once")
	out := flag.String("out", "", "write the figures here as JSON")
	baseline := flag.String("baseline", "", "another evalhost binary whose run -c pass is timed beside, for a before/after ratio")
	venv := flag.Bool("venv", true, "also time a fresh venv of the resolved interpreter, whose start no site-packages .pth slows")
	flag.Parse()
	if err := run(*evalhost, *baseline, *python, *runs, *venv, *out); err != nil {
		fmt.Fprintln(os.Stderr, "startbench:", err)
		os.Exit(1)
	}
}

type target struct {
	name string
	argv []string
}

// results is what -out receives: medians in ms and the ratios.
type results struct {
	Python   string             `json:"python"`
	Resolved string             `json:"resolved"`
	Runs     int                `json:"runs"`
	Median   map[string]float64 `json:"medianMs"`
	CPU      map[string]float64 `json:"medianCpuMs"` // user+sys of the process and the children it waited for
	Ratios   map[string]float64 `json:"ratios"`
	Load     string             `json:"loadavg"`
}

func run(evalhost, baseline, python string, runs int, venv bool, outPath string) error {
	shim, err := exec.LookPath(python)
	if err != nil {
		return err
	}
	b, err := exec.Command(shim, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return fmt.Errorf("%s: %w", shim, err)
	}
	real := strings.TrimSpace(string(b))
	home, err := os.MkdirTemp("", "startbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(), "EVALHOST_HOME="+home)
	defer func() {
		stop := exec.Command(evalhost, "daemon", "stop")
		stop.Env = env
		stop.Run()
	}()
	targets, err := makeTargets(evalhost, baseline, shim, real, home, venv)
	if err != nil {
		return err
	}
	// Warm-up: caches on disk, the background process started.
	for _, t := range targets {
		if _, _, err := timeOne(t, env); err != nil {
			return err
		}
	}
	wall, cpu := map[string][]float64{}, map[string][]float64{}
	for i := range runs {
		for j := range targets {
			t := targets[(i+j)%len(targets)]
			d, c, err := timeOne(t, env)
			if err != nil {
				return err
			}
			wall[t.name] = append(wall[t.name], ms(d))
			cpu[t.name] = append(cpu[t.name], ms(c))
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	res := results{Python: shim, Resolved: real, Runs: runs, Median: map[string]float64{}, CPU: map[string]float64{},
		Ratios: map[string]float64{}, Load: strings.TrimSpace(string(load))}
	for _, t := range targets {
		res.Median[t.name] = median(wall[t.name])
		res.CPU[t.name] = median(cpu[t.name])
	}
	m, c := res.Median, res.CPU
	res.Ratios["run / resolved -c pass (target <= 1.15)"] = m[targets[2].name] / m[targets[1].name]
	res.Ratios["run / python3 -c pass via PATH (target <= 1.0)"] = m[targets[2].name] / m[targets[0].name]
	res.Ratios["run --session warm / resolved -c pass (target <= 0.35)"] = m[targets[3].name] / m[targets[1].name]
	res.Ratios["cpu: run / resolved -c pass"] = c[targets[2].name] / c[targets[1].name]
	if baseline != "" {
		res.Ratios["run / baseline run -c pass"] = m[targets[2].name] / m[targets[4].name]
		res.Ratios["cpu: run / baseline run -c pass"] = c[targets[2].name] / c[targets[4].name]
		res.Ratios["baseline run / resolved -c pass"] = m[targets[4].name] / m[targets[1].name]
	}
	if venv {
		res.Ratios["venv: run / venv -c pass (target <= 1.15)"] = m["evalhost run -c pass (venv)"] / m["venv -c pass"]
		res.Ratios["cpu: venv: run / venv -c pass"] = c["evalhost run -c pass (venv)"] / c["venv -c pass"]
		if baseline != "" {
			res.Ratios["venv: baseline run / venv -c pass"] = m["baseline run -c pass (venv)"] / m["venv -c pass"]
		}
	}
	res.print(targets)
	if outPath != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		return os.WriteFile(outPath, append(b, '\n'), 0o644)
	}
	return nil
}

// timeOne runs a target to its end, output discarded, and says how long
// it took and how much CPU it and the children it waited for used: a
// figure the other load on a shared machine disturbs less than wall time.
func timeOne(t target, env []string) (wall, cpu time.Duration, err error) {
	cmd := exec.Command(t.argv[0], t.argv[1:]...)
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w: %s", t.name, err, out)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// makeTargets lists what is timed: the first four always, in this order
// (run reads the ratios by index), then the baseline and venv ones asked for.
func makeTargets(evalhost, baseline, shim, real, home string, venv bool) ([]target, error) {
	targets := []target{
		{"python3 -c pass (PATH)", []string{shim, "-c", "pass"}},
		{"resolved -c pass", []string{real, "-c", "pass"}},
		{"evalhost run -c pass", []string{evalhost, "run", "-c", "pass"}},
		{"evalhost run --session -c 1+1", []string{evalhost, "run", "--session", "s", "-c", "1+1"}},
	}
	if baseline != "" {
		targets = append(targets, target{"baseline run -c pass", []string{baseline, "run", "-c", "pass"}})
	}
	if !venv {
		return targets, nil
	}
	vpy, err := makeVenv(real, home)
	if err != nil {
		return nil, err
	}
	targets = append(targets, target{"venv -c pass", []string{vpy, "-c", "pass"}},
		target{"evalhost run -c pass (venv)", []string{evalhost, "run", "--python", vpy, "-c", "pass"}})
	if baseline != "" {
		targets = append(targets, target{"baseline run -c pass (venv)", []string{baseline, "run", "--python", vpy, "-c", "pass"}})
	}
	return targets, nil
}

// makeVenv makes a venv of the resolved interpreter under dir and returns
// its python: the start a user of a project venv feels, where the base
// interpreter's site-packages (and any .pth there that imports a package at
// every start) is not loaded, so evalhost's own part is a larger share.
func makeVenv(python, dir string) (string, error) {
	v := dir + "/venv"
	if out, err := exec.Command(python, "-m", "venv", "--without-pip", v).CombinedOutput(); err != nil {
		return "", fmt.Errorf("make a venv with %s (or pass -venv=false): %w: %s", python, err, out)
	}
	return v + "/bin/python", nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// print writes the medians and the ratios, sorted, for a person.
func (res results) print(targets []target) {
	fmt.Printf("%-34s %10s %10s\n", "median of "+fmt.Sprint(res.Runs), "wall ms", "cpu ms")
	for _, t := range targets {
		fmt.Printf("%-34s %10.2f %10.2f\n", t.name, res.Median[t.name], res.CPU[t.name])
	}
	fmt.Printf("loadavg %s\n", res.Load)
	for _, k := range slices.Sorted(maps.Keys(res.Ratios)) {
		fmt.Printf("%-58s %6.2f\n", k, res.Ratios[k])
	}
}
