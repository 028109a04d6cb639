package gateway

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors callers branch on.
var (
	// ErrUnauthorized: the gateway answered 401 (a 403 is ErrForbidden).
	ErrUnauthorized = errors.New("gateway rejected the credentials: set PI_PYTHON_GATEWAY_TOKEN to the gateway's auth token")
	// ErrUnreachable: the gateway could not be reached or is not healthy.
	ErrUnreachable = errors.New("gateway unreachable")
	// ErrFDExhausted: the gateway or this process ran out of file
	// descriptors (EMFILE); the shared gateway should be restarted.
	ErrFDExhausted = errors.New("too many open files")
)

// HTTPError is a gateway answer with an unexpected status.
type HTTPError struct {
	Method, URL string
	Status      int
	Body        string // a bounded prefix of the response body
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("gateway %s %s: status %d", e.Method, e.URL, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	switch e.Status {
	case 401:
		msg += ": " + ErrUnauthorized.Error()
	case 403:
		msg += ": " + forbiddenAdvice
	}
	if e.notAGateway() {
		msg += ": no Jupyter kernel gateway answers at this address; set PI_PYTHON_GATEWAY_URL to the gateway's " +
			"http(s)://host:port, with its base path if it has one (evalhost calls <url>/api/kernels)"
	}
	return msg
}

// notAGateway: the gateway's own REST API is missing at the URL, as when it
// names a plain web server or lacks the gateway's base path.
func (e *HTTPError) notAGateway() bool {
	switch e.Status {
	case 404, 405, 501:
		return strings.HasSuffix(e.URL, "/api/kernels") || strings.HasSuffix(e.URL, "/api/kernelspecs")
	}
	return false
}

// forbiddenAdvice follows a 403 that is not a kernel create's (see
// RefusedError): a kernel gateway or Enterprise Gateway answers 401 to a
// bad token, but a plain Jupyter server answers 403.
const forbiddenAdvice = "the gateway refused this request; a Jupyter kernel gateway or Enterprise Gateway " +
	"answers a wrong or missing token with 401, so the token was accepted and the request itself is not allowed " +
	"(a Jupyter server that is not a gateway answers 403 to a bad token: then check PI_PYTHON_GATEWAY_TOKEN and PI_PYTHON_GATEWAY_URL)"

// Unwrap lets a 401 match ErrUnauthorized, a 403 ErrForbidden and an
// EMFILE report ErrFDExhausted.
func (e *HTTPError) Unwrap() []error {
	var errs []error
	switch e.Status {
	case 401:
		errs = append(errs, ErrUnauthorized)
	case 403:
		errs = append(errs, ErrForbidden)
	}
	if mentionsEMFILE(e.Body) {
		errs = append(errs, ErrFDExhausted)
	}
	return errs
}

// UnreachableError says which URL failed its health check and why.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("gateway unreachable at %s (check the URL, the network and the gateway's health): %v", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// MessageTooBigError is a kernel message larger than evalhost holds in
// memory; it was read past and dropped, and the kernel keeps running.
type MessageTooBigError struct {
	Size, Limit int64
	Start       []byte // the message's first bytes, to say what it was
}

func (e *MessageTooBigError) Error() string {
	return fmt.Sprintf("dropped a kernel message of %.1f MiB (evalhost holds at most %.1f MiB per message; it began %.120q); "+
		"write large data to a file instead of displaying it", float64(e.Size)/(1<<20), float64(e.Limit)/(1<<20), e.Start)
}
