package leakcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// proc is a live process below this one.
type proc struct {
	pid     int
	cmdline string
}

func (p proc) String() string { return strconv.Itoa(p.pid) + " " + p.cmdline }

// stat is what /proc/PID/stat says of a process.
type stat struct {
	pid, ppid int
	state     byte
	comm      string
}

// live is false for zombies: reaping them is their parent's or init's job.
func (s stat) live() bool { return s.state != 'Z' && s.state != 'X' }

// descendants lists the live processes below this one, leaving out those
// o exempts and everything below them. A zombie leader counts while another
// thread of its process runs (see ended).
func descendants(o Options) []proc {
	children := map[int][]stat{}
	for _, s := range allStats() {
		children[s.ppid] = append(children[s.ppid], s)
	}
	var out []proc
	var walk func(pid int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			cmd := cmdline(c)
			if (o.IgnoreProcess != nil && o.IgnoreProcess(cmd)) || slices.Contains(o.IgnorePIDs, c.pid) {
				continue
			}
			if c.live() || !ended(c.pid) {
				out = append(out, proc{pid: c.pid, cmdline: cmd})
			}
			walk(c.pid)
		}
	}
	walk(os.Getpid())
	return out
}

func allStats() []stat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []stat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, ok := readStat(pid); ok {
			out = append(out, s)
		}
	}
	return out
}

// readStat parses pid (comm) state ppid ...; comm may hold spaces and
// parentheses, so the fields after it are split after the last ")".
func readStat(pid int) (stat, bool) {
	return readStatFile(pid, "/proc/"+strconv.Itoa(pid)+"/stat")
}

// readStatFile parses the stat file of process pid or of a thread of it.
func readStatFile(pid int, path string) (stat, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return stat{}, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return stat{}, false
	}
	return stat{pid: pid, ppid: ppid, state: f[0][0], comm: string(b[open+1 : end])}, true
}

// cmdline is a process's arguments joined by spaces, or its name in
// parentheses when it has none (a zombie, or one exiting).
func cmdline(s stat) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/cmdline")
	if line := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")); line != "" {
		return line
	}
	return "(" + s.comm + ")"
}

// Gone reports whether process pid has ended, waiting up to within for it
// to. A zombie has ended (only its exit status is left to collect) once
// its other threads have: the kernel shows a leader that exited first as
// a zombie while they run on, holding the process's descriptors.
func Gone(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(10 * time.Millisecond) {
		if ended(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// ended says whether process pid and every thread of it have ended.
func ended(pid int) bool {
	if s, ok := readStat(pid); ok && s.live() {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	ents, _ := os.ReadDir(dir) // none: gone
	for _, e := range ents {
		if s, ok := readStatFile(pid, dir+e.Name()+"/stat"); ok && s.live() {
			return false
		}
	}
	return true
}

// Parent returns the parent of live process pid.
func Parent(pid int) (int, bool) {
	s, ok := readStat(pid)
	if !ok || !s.live() {
		return 0, false
	}
	return s.ppid, true
}

// InDir lists the live processes whose working directory is dir or below
// it, as "PID CMDLINE": what a test's cells started, wherever they were
// re-parented (init, a subreaper) and whatever session they moved to.
func InDir(dir string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var out []string
	for _, s := range allStats() {
		if !s.live() {
			continue
		}
		cwd, err := os.Readlink("/proc/" + strconv.Itoa(s.pid) + "/cwd")
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		out = append(out, proc{pid: s.pid, cmdline: cmdline(s)}.String())
	}
	return out
}

// GoneFromDir waits up to within for every process InDir(dir) lists to end
// and returns those still alive then.
func GoneFromDir(dir string, within time.Duration) []string {
	for deadline := time.Now().Add(within); ; time.Sleep(10 * time.Millisecond) {
		left := InDir(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}
