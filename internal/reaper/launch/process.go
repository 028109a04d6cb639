package launch

import (
	"os"
	"syscall"
	"time"
)

// Process starts exe as a reaper with files as its descriptors 0, 1, 2,
// ... (nil: /dev/null), in its own session, so that signals for the child's
// process group or terminal never reach it. Not os/exec: its imports would
// make this package's init, and so the spare's start, wait for most of the
// standard library's. Not os.StartProcess either: on Linux the first one a
// program makes forks a probe child to check pidfd support (~0.2 ms of CPU,
// at times milliseconds under load), which a spare's start would wait for.
// at is when the reaper was running.
func Process(exe string, argv, env []string, dir string, files []*os.File) (pid int, at time.Time, err error) {
	fds := make([]uintptr, len(files))
	for i, f := range files {
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return 0, time.Time{}, err
			}
			defer null.Close()
			f = null
			for j := i; j < len(files); j++ {
				if files[j] == nil {
					files[j] = null
				}
			}
		}
		fds[i] = f.Fd() // blocking, as a child expects: it shares the file
	}
	pid, err = syscall.ForkExec(exe, argv, &syscall.ProcAttr{Dir: dir, Env: env, Files: fds, Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		return 0, time.Time{}, err
	}
	return pid, time.Now(), nil
}
