package host

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// RSS returns the interpreter's resident set size in bytes, read from
// /proc/<pid>/status (Linux only).
func (p *Process) RSS() (int64, error) {
	path := fmt.Sprintf("/proc/%d/status", p.pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read rss of pid %d: %w", p.pid, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("VmRSS:")) {
			continue
		}
		fields := bytes.Fields(line[len("VmRSS:"):])
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0, fmt.Errorf("read rss of pid %d: unexpected line %q in %s", p.pid, line, path)
		}
		kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read rss of pid %d: %w", p.pid, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("read rss of pid %d: no VmRSS line in %s (process exited?)", p.pid, path)
}
