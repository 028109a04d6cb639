package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The real refusal (Enterprise Gateway as root) is in tests/remote; these
// cover the wording of each kind of 403 and what a create request carries.

func TestFakeCreateRefusedExplains(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"user refused", `{"reason":"Forbidden","message":"User 'root' is not authorized to start kernel 'Python 3'. Ensure KERNEL_USERNAME is set to an appropriate value and retry the request."}`,
			[]string{`KERNEL_USERNAME="root"`, "User 'root' is not authorized", "Set KERNEL_USERNAME", "unauthorized_users", "not the problem"}},
		{"kernel limit", `{"reason":"Resource Limit","message":"HTTP 403: Resource Limit"}`,
			[]string{"kernel limit is reached", "max_kernels"}},
		{"other", `<html>nope</html>`, []string{"refused to start a kernel", "<html>nope</html>", "ask the gateway's operator"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, _ := NewClient(Config{URL: srv.URL, KernelEnv: map[string]string{"KERNEL_USERNAME": "root"}})
			_, err := c.createKernel(context.Background())
			var re *RefusedError
			if !errors.As(err, &re) || !errors.Is(err, ErrForbidden) || errors.Is(err, ErrUnauthorized) {
				t.Fatalf("createKernel = %v, want a *RefusedError matching ErrForbidden and not ErrUnauthorized", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "set PI_PYTHON_GATEWAY_TOKEN") {
				t.Errorf("error %q advises the token for a 403", err)
			}
		})
	}
}

// Enterprise Gateway words an unreachable SSH host as an authentication
// failure; evalhost says what it can mean (the real case: tests/remote, the
// link taken down).
func TestFakeSSHLaunchFailureExplained(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"reason": "Failure occurred starting kernel on '10.0.0.2'. Returned result: HTTP 403: Failed to authenticate SSHClient with password-less SSHand EG_REMOTE_GSS_SSH='False' (False)", "message": ""}`)
	}))
	defer srv.Close()
	c, _ := NewClient(Config{URL: srv.URL})
	_, err := c.createKernel(context.Background())
	if err == nil || !strings.Contains(err.Error(), "reachable from the gateway") || errors.Is(err, ErrForbidden) {
		t.Errorf("createKernel = %v, want the SSH launch failure explained", err)
	}
}

func TestFakeHealthForbiddenIsNotUnauthorized(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	c, _ := NewClient(Config{URL: srv.URL})
	err := c.Health(context.Background())
	if !errors.Is(err, ErrForbidden) || errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "401") {
		t.Errorf("Health = %v, want ErrForbidden explaining that a bad token gets 401", err)
	}
}

func TestKernelEnvFrom(t *testing.T) {
	cases := []struct {
		name    string
		environ []string
		want    map[string]string
	}{
		{"user's name by default", []string{"HOME=/x", "KERNEL_NAMESPACE=team", "KERNEL_=odd", "KERNEL_EMPTY="},
			map[string]string{"KERNEL_NAMESPACE": "team", "KERNEL_USERNAME": loginName()}},
		{"set name wins", []string{"KERNEL_USERNAME=alice", "KERNEL_IMAGE=img:1"},
			map[string]string{"KERNEL_USERNAME": "alice", "KERNEL_IMAGE": "img:1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := KernelEnvFrom(tc.environ)
			if len(got) != len(tc.want) {
				t.Errorf("KernelEnvFrom = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestFakeCreateCarriesKernelEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		cwd     string
		wantEnv map[string]string
	}{
		{"local gateway sends an empty env", nil, "/w", map[string]string{}},
		{"start values added", map[string]string{"KERNEL_USERNAME": "bob"}, "/w",
			map[string]string{"KERNEL_USERNAME": "bob", "KERNEL_LAUNCH_TIMEOUT": "60", "KERNEL_WORKING_DIR": "/w"}},
		{"user's values win", map[string]string{"KERNEL_USERNAME": "bob", "KERNEL_LAUNCH_TIMEOUT": "300", "KERNEL_WORKING_DIR": "/there"}, "/w",
			map[string]string{"KERNEL_USERNAME": "bob", "KERNEL_LAUNCH_TIMEOUT": "300", "KERNEL_WORKING_DIR": "/there"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bodies := make(chan map[string]json.RawMessage, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body map[string]json.RawMessage
				_ = json.NewDecoder(r.Body).Decode(&body)
				bodies <- body
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, `{"id":"k1","name":"python3"}`)
			}))
			defer srv.Close()
			c, _ := NewClient(Config{URL: srv.URL, KernelEnv: tc.env})
			if _, err := c.createKernelWith(context.Background(), c.createBody(KernelOptions{Cwd: tc.cwd}, time.Minute)); err != nil {
				t.Fatal(err)
			}
			body := <-bodies
			raw := body["env"]
			var got map[string]string
			if err := json.Unmarshal(raw, &got); err != nil || got == nil || len(got) != len(tc.wantEnv) {
				t.Fatalf("env = %s (%v), want %v", raw, err, tc.wantEnv)
			}
			for k, v := range tc.wantEnv {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
