package config

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/gateway/shared"
	"github.com/evalhost/evalhost/sessions"
)

func TestLanguages(t *testing.T) {
	both := []string{sessions.LangPython, sessions.LangShell}
	tests := []struct {
		name, piPy string
		want       []string
		wantErr    string
	}{
		{"unset", "", both, ""},
		{"mix", "mix", both, ""},
		{"both, any case", " Both ", both, ""},
		{"shell only", "0", []string{sessions.LangShell}, ""},
		{"bash", "bash", []string{sessions.LangShell}, ""},
		{"python only", "1", []string{sessions.LangPython}, ""},
		{"py", "py", []string{sessions.LangPython}, ""},
		{"bad", "perl", nil, `PI_PY="perl": use 0 or bash`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PI_PY", tt.piPy)
			got, err := Languages()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Languages() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestStarters(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		b       Backend
		wantErr error
	}{
		{"default runner", nil, Backend{}, nil},
		{"unknown from flag", nil, Backend{Name: "kernel"}, ErrBackend},
		{"unknown from env", map[string]string{"EVALHOST_BACKEND": "kernel"}, Backend{}, ErrBackend},
		{"flag beats env", map[string]string{"EVALHOST_BACKEND": "kernel"}, Backend{Name: BackendRunner}, nil},
		{"private local gateway", nil, Backend{Name: BackendGateway, NoSharedGateway: true}, shared.ErrSharedRequired},
		{"external gateway needs no sharing", map[string]string{"PI_PYTHON_GATEWAY_URL": "http://127.0.0.1:1"}, Backend{NoSharedGateway: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"EVALHOST_BACKEND", "PI_PYTHON_GATEWAY_URL", "PI_PY"} {
				t.Setenv(k, tt.env[k])
			}
			st, err := Starters(t.TempDir(), tt.b)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (st[sessions.LangPython] == nil || st[sessions.LangShell] == nil) {
				t.Fatalf("starters %v lack a language", st)
			}
		})
	}
}

// A language PI_PY turned off fails its cells saying how to turn it on.
func TestStartersDisabledLanguage(t *testing.T) {
	t.Setenv("PI_PY", "bash")
	st, err := Starters(t.TempDir(), Backend{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st[sessions.LangPython](context.Background(), sessions.Spec{})
	if err == nil || !strings.Contains(err.Error(), "Python cells are turned off by PI_PY=bash") {
		t.Fatalf("disabled Python starter: %v", err)
	}
}

// A PI_PYTHON_GATEWAY_URL that is not a gateway's address is refused by
// Starters, whichever backend is chosen, naming the variable, its value,
// what is wrong and what it takes: it failed the first Python cell.
func TestStartersRefuseBadGatewayURL(t *testing.T) {
	tests := []struct {
		name, url, wantErr string
	}{
		{"unset", "", ""},
		{"an address", "http://127.0.0.1:8888", ""},
		{"a base path", "https://gw.example/base/", ""},
		{"not a URL", "not a url", `PI_PYTHON_GATEWAY_URL="not a url": want a Jupyter kernel gateway's http:// or https:// address, such as http://127.0.0.1:8888 (it holds ' ' at byte 3, and a URL holds no white space or control character (write a space as %20)): set it so, or unset it`},
		{"ftp", "ftp://x", `PI_PYTHON_GATEWAY_URL="ftp://x": want a Jupyter kernel gateway's http:// or https:// address, such as http://127.0.0.1:8888 (its scheme is "ftp", not http or https): set it so, or unset it`},
		{"no host", "http://", `(it has no host)`},
		{"a space in the path", "http://gw.example/a b", `(it holds ' ' at byte 19`},
		{"a query", "http://gw.example/?token=abc", `(it has a query (?...), which evalhost does not send: the gateway's token goes in PI_PYTHON_GATEWAY_TOKEN)`},
	}
	for _, tt := range tests {
		for _, b := range []Backend{{}, {Name: BackendRunner}} {
			t.Run(tt.name+"/"+b.Name, func(t *testing.T) {
				t.Setenv("PI_PY", "")
				t.Setenv("EVALHOST_BACKEND", "")
				t.Setenv("PI_PYTHON_GATEWAY_URL", tt.url)
				_, err := Starters(t.TempDir(), b)
				if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
					t.Fatalf("Starters = %v, want %q", err, tt.wantErr)
				}
			})
		}
	}
}
