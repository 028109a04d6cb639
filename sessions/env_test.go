package sessions

import "testing"

// The allow-list's prefixes pass families of variables; a secret inside one
// used to pass too (PI_SECRET_KEY, PI_AUTH), and the gateway's token reached
// every interpreter.
func TestAllowEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"PI_SECRET_KEY", false},
		{"PI_AUTH", false},
		{"PI_OAUTH_CLIENT", false},
		{"PI_AUTHTOKEN", false},
		{"PI_DB_PASSWD", false},
		{"PI_PRIVATE_KEY_PATH", false},
		{"PI_SIGNING_KEY", false},
		{"PI_CREDENTIALS_FILE", false},
		{"PI_SESSION_COOKIE", false},
		{"PI_PYTHON_GATEWAY_TOKEN", false},
		{"PI_TOOL_BRIDGE_TOKEN", false}, // an outer bridge's; evalhost sets its own after filtering
		{"PI_TOOL_BRIDGE_URL", false},
		{"XDG_API_KEY", false},
		{"LC_SECRET", false},
		{"OPENAI_API_KEY", false},
		{"MY_SERVICE_TOKEN", false},
		{"PI_PY", true},
		{"PI_PYTHON_GATEWAY_URL", true},
		{"PI_SESSION_FILE", true},
		{"PI_ARTIFACTS_DIR", true},
		{"PI_KEYBOARD_LAYOUT", true},
		{"PI_AUTHOR", true},
		{"SSH_AUTH_SOCK", true}, // on the allow-list itself: vetted by name
		{"LC_ALL", true},
		{"XDG_RUNTIME_DIR", true},
		{"HTTPS_PROXY", true},
		{"PIP_INDEX_URL", true},
		{"pi_secret", false},
		{"RANDOM_VAR", false},
		{"CUDA_VISIBLE_DEVICES", true}, // which GPUs, threads: a script's resources
		{"OMP_NUM_THREADS", true},
		{"PYTHONHASHSEED", true},
		{"PYTHONBREAKPOINT", true},
		{"PYTHONUNBUFFERED", false}, // the runner's streams write whole lines (see runner/stdio.py)
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AllowEnv(tc.name); got != tc.want {
				t.Errorf("AllowEnv(%q) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}

// Credentials in a proxy's or an index's URL used to reach every cell.
func TestStripURLCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, env, value, want string
	}{
		{"proxy with scheme", "HTTPS_PROXY", "http://user:pw@proxy:3128", "http://proxy:3128"},
		{"proxy without scheme", "http_proxy", "user:pw@proxy:3128", "proxy:3128"},
		{"index token", "PIP_INDEX_URL", "https://__token__:pypi-abc@pypi.example/simple/", "https://pypi.example/simple/"},
		{"extra index list", "PIP_EXTRA_INDEX_URL", "https://a:b@one.example/simple https://two.example/simple https://c@three.example/", "https://one.example/simple https://two.example/simple https://three.example/"},
		{"@ in the password", "HTTP_PROXY", "http://user:p@ss@proxy:8080/", "http://proxy:8080/"},
		{"@ in the path only", "PIP_INDEX_URL", "https://host/pkgs/@scope/simple", "https://host/pkgs/@scope/simple"},
		{"no credentials", "HTTPS_PROXY", "http://proxy:3128", "http://proxy:3128"},
		{"prefix variable with a URL", "PI_PYTHON_GATEWAY_URL", "http://u:p@gw:8888", "http://gw:8888"},
		{"not a URL variable, no scheme", "PI_REMOTE", "git@github.com:org/repo.git", "git@github.com:org/repo.git"},
		{"not a URL variable, with scheme", "PI_REMOTE", "ssh://git:pw@github.com/org/repo", "ssh://github.com/org/repo"},
		{"no URL at all", "NO_PROXY", "localhost,127.0.0.1", "localhost,127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripURLCredentials(tc.env, tc.value); got != tc.want {
				t.Errorf("StripURLCredentials(%q, %q) = %q, want %q", tc.env, tc.value, got, tc.want)
			}
		})
	}
}

func TestFilterEnv(t *testing.T) {
	got := FilterEnv([]string{
		"PI_SECRET_KEY=s", "PI_PYTHON_GATEWAY_TOKEN=g", "HTTPS_PROXY=http://u:p@proxy:3128",
		"PI_PY=py", "PATH=/bin", "OPENAI_API_KEY=k", "LC_ALL=C",
	})
	want := []string{"HTTPS_PROXY=http://proxy:3128", "LC_ALL=C", "PATH=/bin", "PI_PY=py"}
	if len(got) != len(want) {
		t.Fatalf("FilterEnv = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("FilterEnv = %q, want %q", got, want)
		}
	}
}
