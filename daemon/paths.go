package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// maxSocketPath is below the smallest sun_path (104 bytes on macOS, 108 on
// Linux) with room for its terminating NUL.
const maxSocketPath = 100

// Paths are the background process's files, all in one directory that only
// its user may enter.
type Paths struct {
	Dir    string // mode 0700, owned by the user
	Socket string // the Unix socket, mode 0600
	Bind   string // where the socket is bound, then renamed to Socket once private; as long as Socket
	Lock   string // held (flock) by the live process for its whole life
	Start  string // held by a client while it starts a process
	State  string // pid, version and sessions of the live process; left behind by a crash
	Log    string // the process's stderr
	Jobs   string // the last job number given, so that a restarted process never reuses one
	Lost   string // sessions whose state an ended process took, for the next one to tell (lost.go)
}

// PathsFor returns the files under home/daemon. The socket stays there
// whatever the path's length where a long path can be reached by a short
// name (socketAddr: Linux's /proc/self/fd); elsewhere a socket path too
// long for sun_path moves to a 0700 directory of the user's under the
// temp dir, named by a hash of home.
func PathsFor(home string) Paths {
	dir := filepath.Join(home, "daemon")
	p := Paths{Dir: dir, Socket: filepath.Join(dir, "sock"), Bind: filepath.Join(dir, "bind"), Lock: filepath.Join(dir, "lock"),
		Start: filepath.Join(dir, "start.lock"), State: filepath.Join(dir, "state.json"), Log: filepath.Join(dir, "log"),
		Jobs: filepath.Join(dir, "jobs.seq"), Lost: filepath.Join(dir, "lost.json")}
	if len(p.Socket) > maxSocketPath && !longSocketPaths {
		sum := sha256.Sum256([]byte(dir))
		name := filepath.Join(os.TempDir(), fmt.Sprintf("evalhost-%d", os.Getuid()), hex.EncodeToString(sum[:8]))
		p.Socket, p.Bind = name+".sock", name+".bind"
	}
	return p
}
