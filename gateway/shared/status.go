package shared

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/evalhost/evalhost/gateway"
)

// GatewayStatus describes one shared local gateway for `evalhost gateway status`.
type GatewayStatus struct {
	Info    Info  // Token is cleared
	Running bool  // its pid lives and is still the gateway
	Healthy bool  // its health check passes
	Err     error // why it is not healthy, when known
}

// Status reads every recorded gateway under home (one per interpreter)
// and checks each without changing anything. None recorded is an empty
// slice; an unreadable record is an error.
func Status(ctx context.Context, home string) ([]GatewayStatus, error) {
	spawned.reap()
	dirs, err := recordedDirs(home)
	if err != nil {
		return nil, err
	}
	var out []GatewayStatus
	for _, d := range dirs {
		info, err := readInfo(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, statusOf(ctx, info))
	}
	return out, nil
}

func statusOf(ctx context.Context, info Info) GatewayStatus {
	st := GatewayStatus{Info: info, Running: isGateway(info)}
	st.Info.Token = ""
	if !st.Running {
		st.Err = fmt.Errorf("gateway pid %d is not running (or is now another process)", info.PID)
		return st
	}
	if err := kernelsPrivate(info); err != nil {
		st.Err = fmt.Errorf("gateway pid %d is not used: %w; the next kernel start replaces it", info.PID, err)
		return st
	}
	c, err := gateway.NewClient(info.Config())
	if err == nil {
		hctx, cancel := context.WithTimeout(ctx, healthAttempts[0])
		err = c.Health(hctx)
		cancel()
	}
	st.Healthy, st.Err = err == nil, err
	return st
}

// Stop ends every shared local gateway under home (their kernels with
// them) and removes their records. stopped are the pids of those that were
// running, in the records' order: stopping when none runs is not an error,
// and a record of one that no longer runs is removed without a pid.
func Stop(ctx context.Context, home string) (stopped []int, err error) {
	dirs, err := recordedDirs(home)
	if err != nil {
		return nil, fmt.Errorf("stop gateway: %w", err)
	}
	var errs []error
	for _, d := range dirs {
		pid, err := stopIn(ctx, d)
		if pid != 0 {
			stopped = append(stopped, pid)
		}
		errs = append(errs, err)
	}
	return stopped, errors.Join(errs...)
}

// StopFor ends python's shared gateway only.
func StopFor(ctx context.Context, home, python string) error {
	_, err := stopIn(ctx, dirFor(home, python))
	return err
}

// stopIn ends the gateway recorded in dir, returning its pid when it ran.
func stopIn(ctx context.Context, dir string) (pid int, err error) {
	lock, err := takeLock(ctx, lockPath(dir))
	if err != nil {
		return 0, fmt.Errorf("stop gateway: %w", err)
	}
	defer lock.release()
	info, err := readInfo(dir)
	if err == nil {
		if isGateway(info) {
			terminate(info.PID, 5*time.Second)
			pid = info.PID
		}
		spawned.reap()
		removeKernelDir(info)
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("stop gateway: %w", err)
	}
	if err := removeInfo(dir); err != nil {
		return pid, fmt.Errorf("stop gateway: %w", err)
	}
	return pid, nil
}
