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
// thread of its process runs (see runningThread).
func descendants(o Options) []proc {
	children := map[int][]stat{}
	for _, s := range allStats() {
		children[s.ppid] = append(children[s.ppid], s)
	}
	var out []proc
	var walk func(pid int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			at, running := runningThread(c)
			cmd := cmdline(at, c.comm)
			if (o.IgnoreProcess != nil && o.IgnoreProcess(cmd)) || slices.Contains(o.IgnorePIDs, c.pid) {
				continue
			}
			if running {
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

// cmdline is the arguments, joined by spaces, of the process whose /proc
// directory (or a thread's) is at, or its name comm in parentheses when it
// has none (a zombie, or one exiting).
func cmdline(at, comm string) string {
	b, _ := os.ReadFile(at + "cmdline")
	if line := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")); line != "" {
		return line
	}
	return "(" + comm + ")"
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
	s, ok := readStat(pid)
	if !ok {
		s = stat{pid: pid, state: 'X'} // its threads may yet be read
	}
	_, running := runningThread(s)
	return !running
}

// runningThread returns the /proc directory of a thread of process s that
// has not ended, and true: the process's own while its leader lives, else
// another thread's. A leader that exited first is a zombie whose directory
// shows no cwd, descriptors or command line while its other threads run on
// with them, and only a running thread's shows them. With every thread
// ended it returns the process's own directory and false.
func runningThread(s stat) (string, bool) {
	own := "/proc/" + strconv.Itoa(s.pid) + "/"
	if s.live() {
		return own, true
	}
	ents, _ := os.ReadDir(own + "task") // none: gone
	for _, e := range ents {
		at := own + "task/" + e.Name() + "/"
		if t, ok := readStatFile(s.pid, at+"stat"); ok && t.live() {
			return at, true
		}
	}
	return own, false
}

// Parent returns the parent of process pid while it has not ended (as Gone
// judges).
func Parent(pid int) (int, bool) {
	s, ok := readStat(pid)
	if !ok {
		return 0, false
	}
	if _, running := runningThread(s); !running {
		return 0, false
	}
	return s.ppid, true
}

// InDir lists the processes not ended (as Gone judges) whose working
// directory is dir or below it, as "PID CMDLINE": what a test's cells
// started, wherever they were re-parented (init, a subreaper) and whatever
// session they moved to.
func InDir(dir string) []string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	var out []string
	for _, s := range allStats() {
		at, running := runningThread(s)
		if !running {
			continue
		}
		cwd, err := os.Readlink(at + "cwd")
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		out = append(out, proc{pid: s.pid, cmdline: cmdline(at, s.comm)}.String())
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
