package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Config names a gateway. The caller fills it from PI_PYTHON_GATEWAY_URL and
// PI_PYTHON_GATEWAY_TOKEN for an external gateway, or from an [Endpoint].
type Config struct {
	URL        string       // http(s)://host:port[/base]
	Token      string       // sent as "Authorization: token <Token>" when set
	KernelName string       // kernelspec to start; empty means the gateway's default
	HTTPClient *http.Client // nil means a client with no overall timeout
	// VerifyConn, when set, checks every connection the client opens,
	// before anything is sent on it: a local gateway's caller makes sure
	// the other end is its own process, so that the token never goes to
	// whoever holds the port. An error fails the request and wraps it.
	// It works with the default client only: NewClient refuses it with
	// HTTPClient.
	VerifyConn func(net.Conn) error
	// KernelEnv is sent in each kernel create request (see KernelEnvFrom):
	// the KERNEL_* values Enterprise Gateway reads. Nil sends an empty env,
	// as for the shared local gateway.
	KernelEnv map[string]string
}

// Client talks to one gateway's REST API and kernel websockets.
type Client struct {
	base      *url.URL
	token     string
	kernel    string
	kernelEnv map[string]string
	http      *http.Client
}

// retryDelay is the pause before the one retry of a kernel create.
var retryDelay = 250 * time.Millisecond

// NewClient checks cfg and returns a client; it does not contact the gateway.
func NewClient(cfg Config) (*Client, error) {
	raw := strings.TrimSpace(cfg.URL)
	if raw == "" {
		return nil, errors.New("gateway url is empty: set PI_PYTHON_GATEWAY_URL to the gateway's http(s) address, e.g. http://127.0.0.1:8888")
	}
	u, err := ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("gateway url %q: %w; want an http:// or https:// address with a host, e.g. http://127.0.0.1:8888", raw, err)
	}
	hc := cfg.HTTPClient
	switch {
	case hc != nil && cfg.VerifyConn != nil:
		return nil, errors.New("gateway config: VerifyConn needs the default HTTP client (HTTPClient set)")
	case hc == nil:
		hc = defaultHTTPClient(cfg.VerifyConn)
	}
	return &Client{base: u, token: cfg.Token, kernel: cfg.KernelName, kernelEnv: cfg.KernelEnv, http: hc}, nil
}

// ParseURL reads a gateway's address, as Config.URL takes it (white space
// around it dropped): an http:// or https:// URL with a host, and a port
// and a base path if need be; the base path loses its trailing slashes.
// The error says what is wrong with it, in words that follow the value
// ("it has no host"), for the caller to name where it came from. It only
// reads the text: nothing is looked up or contacted. Refused besides what
// is not such a URL: white space or a control character inside it (a URL
// writes them escaped, %20), a port past 65535, and a query or fragment,
// which no request would send (a Jupyter URL's ?token=... among them: the
// token goes in Config.Token).
func ParseURL(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, errors.New("it is empty")
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return nil, fmt.Errorf("it holds %q at byte %d, and a URL holds no white space or control character (write a space as %%20)", []rune(s[i:])[0], i)
	}
	scheme, _, found := strings.Cut(s, "://")
	if !found {
		return nil, errors.New("it does not start with http:// or https://")
	}
	if scheme = strings.ToLower(scheme); scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("its scheme is %q, not http or https", scheme)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("it is not a URL (%v)", err)
	}
	switch {
	case u.Hostname() == "":
		return nil, errors.New("it has no host")
	case u.RawQuery != "" || u.ForceQuery:
		return nil, errors.New("it has a query (?...), which evalhost does not send: the gateway's token goes in PI_PYTHON_GATEWAY_TOKEN")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, errors.New("it has a fragment (#...), which evalhost does not send")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("its port %s is not one from 1 to 65535", p)
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	return u, nil
}

// URL is the gateway's base address.
func (c *Client) URL() string { return c.base.String() }

// Health runs the health check, GET /api/kernelspecs. A 401/403 matches
// ErrUnauthorized; a network failure is an *UnreachableError.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, http.MethodGet, "/api/kernelspecs", nil, http.StatusOK)
	return err
}

// healthTimeout bounds the health check before a kernel start.
var healthTimeout = 10 * time.Second

// healthWithin is Health bounded by d; a gateway that does not answer in
// time is an *UnreachableError.
func (c *Client) healthWithin(ctx context.Context, d time.Duration) error {
	hctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := c.Health(hctx)
	if err != nil && hctx.Err() != nil && ctx.Err() == nil {
		return &UnreachableError{URL: c.base.String(), Err: fmt.Errorf("GET /api/kernelspecs got no answer within %v", d)}
	}
	return err
}

type kernelModel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// createKernel starts a kernel, retrying once when the gateway answers 5xx.
func (c *Client) createKernel(ctx context.Context) (kernelModel, error) {
	return c.createKernelWith(ctx, c.createBody(KernelOptions{}, 0))
}

// createKernelWith sends body as the create request; see createKernel.
func (c *Client) createKernelWith(ctx context.Context, body []byte) (kernelModel, error) {
	var km kernelModel
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var raw []byte
		raw, err = c.do(ctx, http.MethodPost, "/api/kernels", body, http.StatusCreated, http.StatusOK)
		if err == nil {
			if jerr := json.Unmarshal(raw, &km); jerr != nil || km.ID == "" {
				return km, fmt.Errorf("gateway create kernel: answer has no kernel id: %.200q", raw)
			}
			return km, nil
		}
		var he *HTTPError
		if !errors.As(err, &he) || he.Status < 500 || attempt == 1 {
			break
		}
		select {
		case <-ctx.Done():
			return km, fmt.Errorf("gateway create kernel: %w (after %v)", ctx.Err(), err)
		case <-time.After(retryDelay):
		}
	}
	return km, fmt.Errorf("gateway create kernel: %w", c.explainRefusal(err))
}

// deleteRetryFor bounds the retries of a kernel delete the gateway answers
// with a 5xx: Jupyter answers 500 while its restarter is bringing a dead
// kernel back (jupyter_client's "Exception is not set"), and a kernel left
// then runs, restarted, until the gateway stops.
var deleteRetryFor = 5 * time.Second

func (c *Client) deleteKernel(ctx context.Context, id string) error {
	deadline := time.Now().Add(deleteRetryFor)
	for delay := 50 * time.Millisecond; ; delay = min(delay*2, 500*time.Millisecond) {
		_, err := c.do(ctx, http.MethodDelete, "/api/kernels/"+url.PathEscape(id), nil,
			http.StatusNoContent, http.StatusOK, http.StatusNotFound)
		var he *HTTPError
		if err == nil || !errors.As(err, &he) || he.Status < 500 || time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

func (c *Client) interruptKernel(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodPost, "/api/kernels/"+url.PathEscape(id)+"/interrupt", nil,
		http.StatusNoContent, http.StatusOK)
	return err
}

// do sends one request and returns the body when the status is one of ok.
func (c *Client) do(ctx context.Context, method, path string, body []byte, ok ...int) ([]byte, error) {
	full := c.base.String() + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, full, rd)
	if err != nil {
		return nil, fmt.Errorf("gateway %s %s: %w", method, full, err)
	}
	c.authorize(req.Header)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("gateway %s %s: %w", method, full, ctx.Err())
		}
		return nil, &UnreachableError{URL: c.base.String(), Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, &UnreachableError{URL: c.base.String(), Err: fmt.Errorf("reading %s %s: %w", method, path, err)}
	}
	for _, s := range ok {
		if resp.StatusCode == s {
			return raw, nil
		}
	}
	return nil, &HTTPError{Method: method, URL: full, Status: resp.StatusCode, Body: bodyPrefix(raw)}
}

func (c *Client) authorize(h http.Header) {
	if c.token != "" {
		h.Set("Authorization", "token "+c.token)
	}
}

// bodyPrefix is the start of an answer's body on one line (an HTML error
// page would otherwise spread over many).
func bodyPrefix(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// channelsURL is the websocket address of a kernel's channels.
func (c *Client) channelsURL(id string) string {
	u := *c.base
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path += "/api/kernels/" + url.PathEscape(id) + "/channels"
	return u.String()
}
