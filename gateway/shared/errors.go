package shared

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
)

// Sentinel errors callers branch on.
var (
	// ErrSharedRequired is the answer to a request for a non-shared local
	// gateway; the wording is the reference runtime's.
	ErrSharedRequired = errors.New("Shared Python gateway required; local gateways are disabled") //nolint:staticcheck // wording fixed by the reference runtime
	// ErrMissingPackages: the interpreter cannot import kernel_gateway or
	// ipykernel. The error is a *MissingPackagesError.
	ErrMissingPackages = errors.New("python gateway packages missing")
	// ErrInUse: the recorded gateway runs but this caller cannot use it; it
	// was left running for the callers that can. The error is an
	// *InUseError.
	ErrInUse = errors.New("shared gateway left running")
	// ErrForeignListener: the other end of a connection to a shared
	// gateway's port is another user's process, which was sent nothing.
	// The error is a *ForeignListenerError.
	ErrForeignListener = errors.New("shared gateway port held by another user")
)

// RequireShared rejects a request for a non-shared local gateway (a user's
// sharedGateway=false) with the reference runtime's message; callers check
// the setting with it before Acquire.
func RequireShared(shared bool) error {
	if !shared {
		return ErrSharedRequired
	}
	return nil
}

// MissingPackagesError names the interpreter that lacks the packages.
type MissingPackagesError struct {
	Python string
	Detail string // the interpreter's import error
}

func (e *MissingPackagesError) Error() string {
	return fmt.Sprintf("python gateway packages missing in %s (%s): install them with `%s -m pip install jupyter_kernel_gateway ipykernel`",
		e.Python, e.Detail, e.Python)
}

func (e *MissingPackagesError) Unwrap() error { return ErrMissingPackages }

// InUseError is a recorded gateway that runs, and may serve other evalhost
// processes' kernels, but that this caller cannot use: it rejects the
// recorded token, or it records another interpreter. Ending it would end
// those kernels, so it is left alone and the caller is told how to replace
// it.
type InUseError struct {
	Info Info  // Token cleared
	Err  error // why it cannot be used
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("the shared gateway %s (pid %d, python %s) is running but cannot be used: %v; "+
		"it was left running because other evalhost processes may have kernels on it; "+
		"`evalhost gateway stop` ends it (and those kernels) so that the next call starts a new one",
		e.Info.URL, e.Info.PID, e.Info.PythonPath, e.Err)
}

func (e *InUseError) Unwrap() []error { return []error{ErrInUse, e.Err} }

// ForeignListenerError is a connection to a shared gateway's port whose
// other end belongs to another user: not the gateway evalhost started, but
// a process that took the port (after the gateway ended, say). It was
// closed before anything, the token included, was sent.
type ForeignListenerError struct {
	Addr string // host:port dialled
	UID  uint32 // the owner of the socket at the other end
	Self int    // this process's uid
}

func (e *ForeignListenerError) Error() string {
	who := "uid " + strconv.FormatUint(uint64(e.UID), 10)
	if u, err := user.LookupId(strconv.FormatUint(uint64(e.UID), 10)); err == nil {
		who += " (" + u.Username + ")"
	}
	return fmt.Sprintf("refused the shared gateway's address %s: the process listening there belongs to %s, not to this user "+
		"(uid %d), so it is not the gateway evalhost started, and nothing was sent to it; another user's process has taken the port "+
		"(it may have been waiting for the gateway to end). `evalhost gateway stop` forgets this gateway, and the next call "+
		"starts one on a port of its own",
		e.Addr, who, e.Self)
}

func (e *ForeignListenerError) Unwrap() error { return ErrForeignListener }
