//go:build !unix

package daemon

import (
	"context"
	"errors"
	"os"
	"time"
)

// errNoUnix: the background process needs Unix sockets, flock and sessions.
var errNoUnix = errors.New("the evalhost background process (run --session) needs a Unix system")

func ensureDir(string) error                            { return errNoUnix }
func checkSocket(string) error                          { return errNoUnix }
func removeStale(string) error                          { return errNoUnix }
func lockFile(string, bool) (*os.File, error)           { return nil, errNoUnix }
func awaitLock(string, time.Duration) (*os.File, error) { return nil, errNoUnix }
func spawn(context.Context, DialConfig) error           { return errNoUnix }

// SignalReady does nothing where no process can be started to wait for it.
func SignalReady() {}

// CloseInherited does nothing where no background process runs.
func CloseInherited() {}
