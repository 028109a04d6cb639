package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrForbidden: the gateway answered 403. It accepted (or needs no)
// credentials and refused the request itself: Enterprise Gateway refusing
// the kernel's user or a kernel limit reached. A wrong or missing token is
// a 401 (ErrUnauthorized).
var ErrForbidden = errors.New("gateway refused the request")

// RefusedError is a 403 to a kernel create, with what evalhost sent and the
// gateway's own reason.
type RefusedError struct {
	URL    string
	User   string // the KERNEL_USERNAME evalhost sent; "" when it sent none
	Reason string // the gateway's words
	Err    *HTTPError
}

func (e *RefusedError) Error() string {
	who := "evalhost sent no KERNEL_USERNAME, so the gateway judged the user it runs as"
	if e.User != "" {
		who = fmt.Sprintf("evalhost sent KERNEL_USERNAME=%q", e.User)
	}
	switch {
	case e.refusesUser():
		return fmt.Sprintf("the gateway at %s refused to start a kernel for that user (403: %s; %s). "+
			"Set KERNEL_USERNAME in evalhost's environment to a user the gateway allows: Enterprise Gateway "+
			"refuses root unless its operator changes --EnterpriseGatewayApp.unauthorized_users, and admits only "+
			"--EnterpriseGatewayApp.authorized_users when that is set. The token was accepted; PI_PYTHON_GATEWAY_TOKEN is not the problem",
			e.URL, e.Reason, who)
	case e.limitReached():
		return fmt.Sprintf("the gateway at %s refused to start another kernel: its kernel limit is reached (403: %s). "+
			"End kernels you no longer use (evalhost sessions, notebooks) or ask its operator to raise "+
			"--EnterpriseGatewayApp.max_kernels or max_kernels_per_user", e.URL, e.Reason)
	}
	return fmt.Sprintf("the gateway at %s refused to start a kernel (403: %s; %s). The token was accepted "+
		"(a wrong or missing one gets 401); ask the gateway's operator what it allows", e.URL, e.Reason, who)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// refusesUser: Enterprise Gateway's words for an unauthorized user.
func (e *RefusedError) refusesUser() bool {
	return strings.Contains(e.Reason, "KERNEL_USERNAME") || strings.Contains(e.Reason, "is not authorized") ||
		strings.Contains(e.Reason, "users authorized")
}

func (e *RefusedError) limitReached() bool {
	r := strings.ToLower(e.Reason)
	return strings.Contains(r, "resource limit") || strings.Contains(r, "max_kernels") || strings.Contains(r, "maximum")
}

// sshLaunchAdvice follows Enterprise Gateway's report of a failed SSH
// launch, whose wording blames authentication whatever went wrong.
const sshLaunchAdvice = "Enterprise Gateway could not start the kernel on its host over SSH (it reports every SSH " +
	"failure, an unreachable or stopped host too, as an authentication failure): check that the host is up and " +
	"reachable from the gateway, and that the gateway's user has a key it accepts and its key in known_hosts"

// explainRefusal turns a 403 to a kernel create into a *RefusedError, and
// adds what Enterprise Gateway's SSH launch failure means.
func (c *Client) explainRefusal(err error) error {
	var he *HTTPError
	if errors.As(err, &he) && he.Status >= 500 && strings.Contains(he.Body, "SSHClient") {
		return fmt.Errorf("%w: %s", err, sshLaunchAdvice)
	}
	if !errors.As(err, &he) || he.Status != 403 {
		return err
	}
	return &RefusedError{URL: c.base.String(), User: c.kernelEnv[envUsername], Reason: gatewayReason(he.Body), Err: he}
}

// gatewayReason is the message of a Jupyter JSON error body
// ({"reason":…,"message":…}), or the body itself.
func gatewayReason(body string) string {
	var j struct{ Reason, Message string }
	if json.Unmarshal([]byte(body), &j) == nil {
		switch {
		case j.Message != "" && j.Reason != "" && !strings.Contains(j.Message, j.Reason):
			return j.Reason + ": " + j.Message
		case j.Message != "":
			return j.Message
		case j.Reason != "":
			return j.Reason
		}
	}
	if body == "" {
		return "no reason given"
	}
	return body
}
