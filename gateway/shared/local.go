package shared

import (
	"context"
	"errors"
	"fmt"

	"github.com/evalhost/evalhost/gateway"
)

// Local starts kernels on the shared local gateway.
type Local struct {
	Home    string // evalhost home; the gateway lives under Home/python-gateway
	Python  string // interpreter that runs the gateway and its kernels
	Options AcquireOptions
}

// StartKernel acquires the shared gateway and starts a kernel on it. When
// the gateway ran out of file descriptors, it restarts the shared gateway
// once and tries again.
func (l Local) StartKernel(ctx context.Context, opts gateway.KernelOptions) (*gateway.Kernel, *Endpoint, error) {
	k, ep, err := l.start(ctx, opts)
	if err == nil || !restartHelps(err) {
		return k, ep, err
	}
	if serr := StopFor(ctx, l.Home, l.Python); serr != nil {
		return nil, nil, fmt.Errorf("%w (recovery: restarting the shared gateway failed: %v)", err, serr)
	}
	k, ep, rerr := l.start(ctx, opts)
	if rerr != nil {
		return nil, nil, fmt.Errorf("after restarting the shared gateway for %v: %w", err, rerr)
	}
	return k, ep, nil
}

func (l Local) start(ctx context.Context, opts gateway.KernelOptions) (*gateway.Kernel, *Endpoint, error) {
	ep, err := AcquireWith(ctx, l.Home, l.Python, l.Options)
	if err != nil {
		return nil, nil, err
	}
	c, err := gateway.NewClient(ep.Config())
	if err != nil {
		return nil, nil, err
	}
	k, err := c.StartKernel(ctx, opts)
	return k, ep, err
}

// restartHelps: the gateway itself reported running out of file
// descriptors, which a restart cures for everyone. This process running out
// (a local EMFILE) is not cured by ending the kernels of every other
// process on the gateway, so that error is returned as it is.
func restartHelps(err error) bool {
	var he *gateway.HTTPError
	return errors.As(err, &he) && errors.Is(he, gateway.ErrFDExhausted)
}
