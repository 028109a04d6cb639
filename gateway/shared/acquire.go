package shared

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/evalhost/evalhost/gateway"
)

// AcquireOptions tune [AcquireWith].
type AcquireOptions struct {
	// Env is the gateway's environment; nil means this process's. The
	// caller filters it (allow-list, API keys out). Kernels do not inherit
	// it: each is launched with PATH alone and applies its caller's.
	Env []string
	// StartTimeout bounds a gateway start; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
}

// Endpoint is a usable shared gateway.
type Endpoint struct {
	Info
	Reused bool // an already running gateway was found healthy
}

// Acquire returns the shared local gateway of python under
// <home>/python-gateway, starting one when none is healthy.
func Acquire(ctx context.Context, home, python string) (*Endpoint, error) {
	return AcquireWith(ctx, home, python, AcquireOptions{})
}

// starting makes concurrent callers in this process that need the same
// gateway share one acquisition: one takes the lock and starts it.
var starting singleflight.Group

// AcquireWith is Acquire with options.
func AcquireWith(ctx context.Context, home, python string, opts AcquireOptions) (*Endpoint, error) {
	if home == "" || python == "" {
		return nil, errors.New("acquire gateway: home and python must be set (home is the evalhost home, python the interpreter that has kernel_gateway)")
	}
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	for attempt := 1; ; attempt++ {
		v, err, _ := starting.Do(home+"\x00"+python, func() (any, error) {
			return acquire(ctx, home, python, opts)
		})
		// The shared call ran under the first caller's context; a caller
		// whose own context is still live tries again rather than take
		// that caller's cancellation for its own (a few times: each retry
		// that shares another's call may meet another cancellation).
		if err != nil && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) &&
			!errors.Is(err, errStartTimedOut) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		ep := *v.(*Endpoint)
		return &ep, nil
	}
}

// errStartTimedOut marks a start that ran out of its own StartTimeout, which
// a retry would only repeat.
var errStartTimedOut = errors.New("gateway start timed out")

func acquire(ctx context.Context, home, python string, opts AcquireOptions) (*Endpoint, error) {
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errStartTimedOut)
	defer cancel()
	dir := dirFor(home, python)
	spawned.reap()
	lock, err := takeLock(ctx, lockPath(dir))
	if err != nil {
		return nil, fmt.Errorf("acquire gateway: %w", withCause(ctx, err))
	}
	defer lock.release()
	var stale *Info // a running gateway to end once its replacement is healthy
	if info, err := readInfo(dir); err == nil {
		if info.PythonPath != python {
			return nil, inUse(info, fmt.Errorf("%s records python %s, not %s", infoPath(dir), info.PythonPath, python))
		}
		st, perr := probe(ctx, info)
		switch st {
		case stateHealthy:
			return &Endpoint{Info: info, Reused: true}, nil
		case stateRejected:
			return nil, inUse(info, perr)
		case stateUnresponsive:
			if ctx.Err() != nil {
				return nil, fmt.Errorf("acquire gateway: checking %s (pid %d): %w", info.URL, info.PID, withCause(ctx, perr))
			}
			stale = &info
		case stateExposed:
			stale = &info
		case stateGone:
			removeKernelDir(info)
		}
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	info, err := spawn(ctx, dir, python, env)
	if err != nil {
		if stale != nil {
			err = fmt.Errorf("%w (the gateway it was to replace, pid %d, was left running)", err, stale.PID)
		}
		return nil, fmt.Errorf("acquire gateway: %w", withCause(ctx, err))
	}
	if err := writeInfo(dir, info); err != nil {
		terminate(info.PID, 2*time.Second)
		removeKernelDir(info)
		return nil, fmt.Errorf("acquire gateway: %w", err)
	}
	if stale != nil {
		if isGateway(*stale) {
			terminate(stale.PID, 5*time.Second)
		}
		removeKernelDir(*stale)
	}
	return &Endpoint{Info: info}, nil
}

// withCause adds ctx's cause (errStartTimedOut) to err once ctx is done.
func withCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
		return fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

func inUse(info Info, err error) error {
	info.Token = ""
	return fmt.Errorf("acquire gateway: %w", &InUseError{Info: info, Err: err})
}

// state is what a health probe found.
type state int

const (
	stateGone         state = iota // the pid is not (or no longer) the gateway
	stateHealthy                   // it answered
	stateRejected                  // it answered 401/403: the recorded token is not its own
	stateUnresponsive              // it runs but gave no good answer to any attempt
	stateExposed                   // its kernels' sockets are not private (kernelsPrivate)
)

// healthAttempts are the time limits of successive health checks of a
// running gateway: one that is merely slow (a flood of output, CPU
// starvation, a stopped process) gets three chances, each longer, before
// it is replaced.
var healthAttempts = []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second}

// onHealthRetry, when set (by tests), is called after a failed attempt that
// will be retried.
var onHealthRetry func(err error)

// probe checks the recorded gateway.
func probe(ctx context.Context, info Info) (state, error) {
	if !isGateway(info) {
		return stateGone, nil
	}
	if err := kernelsPrivate(info); err != nil {
		return stateExposed, err
	}
	c, err := gateway.NewClient(info.Config())
	if err != nil {
		return stateRejected, err
	}
	var last error
	for i, limit := range healthAttempts {
		hctx, cancel := context.WithTimeout(ctx, limit)
		last = c.Health(hctx)
		cancel()
		switch {
		case last == nil:
			return stateHealthy, nil
		case errors.Is(last, gateway.ErrUnauthorized):
			return stateRejected, last
		case !isGateway(info):
			return stateGone, nil
		case ctx.Err() != nil:
			return stateUnresponsive, last
		}
		if i < len(healthAttempts)-1 && onHealthRetry != nil {
			onHealthRetry(last)
		}
	}
	return stateUnresponsive, fmt.Errorf("no good answer to %d health checks: %w", len(healthAttempts), last)
}
