package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// AcquireOptions tune [AcquireWith].
type AcquireOptions struct {
	// Env is the gateway's environment, which its kernels inherit; nil means
	// this process's. The caller filters it (allow-list, API keys out).
	Env []string
	// StartTimeout bounds a gateway start; 0 means DefaultGatewayStartTimeout.
	StartTimeout time.Duration
}

// Endpoint is a usable shared gateway.
type Endpoint struct {
	Info
	Reused bool // an already running gateway was found healthy
}

// RequireShared rejects a request for a non-shared local gateway (a user's
// sharedGateway=false) with the reference runtime's message; callers check
// the setting with it before Acquire.
func RequireShared(shared bool) error {
	if !shared {
		return ErrSharedRequired
	}
	return nil
}

// Acquire returns the shared local gateway under <home>/python-gateway,
// starting one with python when none is healthy.
func Acquire(ctx context.Context, home, python string) (*Endpoint, error) {
	return AcquireWith(ctx, home, python, AcquireOptions{})
}

// AcquireWith is Acquire with options.
func AcquireWith(ctx context.Context, home, python string, opts AcquireOptions) (*Endpoint, error) {
	if home == "" || python == "" {
		return nil, errors.New("acquire gateway: home and python must be set (home is the evalhost home, python the interpreter that has kernel_gateway)")
	}
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultGatewayStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spawned.reap()
	lock, err := takeLock(ctx, lockPath(home))
	if err != nil {
		return nil, fmt.Errorf("acquire gateway: %w", err)
	}
	defer lock.release()
	if info, err := readInfo(home); err == nil {
		if info.PythonPath == python && healthy(ctx, info) {
			return &Endpoint{Info: info, Reused: true}, nil
		}
		// Dead, unhealthy, or of another interpreter: replace it.
		if isGateway(info) {
			terminate(info.PID, 5*time.Second)
		}
	}
	if err := removeInfo(home); err != nil {
		return nil, fmt.Errorf("acquire gateway: %w", err)
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	info, err := spawn(ctx, home, python, env)
	if err != nil {
		return nil, fmt.Errorf("acquire gateway: %w", err)
	}
	if err := writeInfo(home, info); err != nil {
		terminate(info.PID, 2*time.Second)
		return nil, fmt.Errorf("acquire gateway: %w", err)
	}
	return &Endpoint{Info: info}, nil
}

// healthy reports whether the recorded gateway's pid lives and its health
// check passes.
func healthy(ctx context.Context, info Info) bool {
	if !isGateway(info) {
		return false
	}
	c, err := NewClient(info.Config())
	if err != nil {
		return false
	}
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return c.Health(hctx) == nil
}

// GatewayStatus describes the shared local gateway for `evalhost gateway status`.
type GatewayStatus struct {
	Recorded bool  // gateway.json exists and is readable
	Info     Info  // when Recorded; Token is cleared
	Running  bool  // its pid lives and is still the gateway
	Healthy  bool  // its health check passes
	Err      error // why it is not healthy, when known
}

// Status reads gateway.json and checks the gateway without changing anything.
func Status(ctx context.Context, home string) (GatewayStatus, error) {
	spawned.reap()
	info, err := readInfo(home)
	if errors.Is(err, os.ErrNotExist) {
		return GatewayStatus{}, nil
	}
	if err != nil {
		return GatewayStatus{}, err
	}
	st := GatewayStatus{Recorded: true, Info: info, Running: isGateway(info)}
	st.Info.Token = ""
	if !st.Running {
		st.Err = fmt.Errorf("gateway pid %d is not running (or is now another process)", info.PID)
		return st, nil
	}
	c, err := NewClient(info.Config())
	if err == nil {
		hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = c.Health(hctx)
		cancel()
	}
	st.Healthy, st.Err = err == nil, err
	return st, nil
}

// Stop ends the shared local gateway (its kernels with it) and removes
// gateway.json. Stopping when none runs is not an error.
func Stop(ctx context.Context, home string) error {
	lock, err := takeLock(ctx, lockPath(home))
	if err != nil {
		return fmt.Errorf("stop gateway: %w", err)
	}
	defer lock.release()
	info, err := readInfo(home)
	if err == nil {
		if isGateway(info) {
			terminate(info.PID, 5*time.Second)
		}
		spawned.reap()
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stop gateway: %w", err)
	}
	if err := removeInfo(home); err != nil {
		return fmt.Errorf("stop gateway: %w", err)
	}
	return nil
}
