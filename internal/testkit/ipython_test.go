package testkit

import (
	"os"
	"testing"
)

// IsolateIPython adds IPYTHONDIR to a whitelist the user set, and keeps
// one that names it already whole: kernel_gateway passes a kernel only the
// variables listed.
func TestIsolateIPythonKeepsTheWhitelist(t *testing.T) {
	cases := []struct{ name, old, want string }{
		{"unset", "", "IPYTHONDIR"},
		{"other names", "FOO,BAR", "FOO,BAR,IPYTHONDIR"},
		{"names it already", "FOO,IPYTHONDIR,BAR", "FOO,IPYTHONDIR,BAR"},
		{"names it alone", "IPYTHONDIR", "IPYTHONDIR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("IPYTHONDIR", "")
			t.Setenv("KG_ENV_PROCESS_WHITELIST", tc.old)
			remove, err := IsolateIPython()
			if err != nil {
				t.Fatal(err)
			}
			defer remove()
			if got := os.Getenv("KG_ENV_PROCESS_WHITELIST"); got != tc.want {
				t.Errorf("KG_ENV_PROCESS_WHITELIST %q, want %q", got, tc.want)
			}
			if dir := os.Getenv("IPYTHONDIR"); dir == "" {
				t.Errorf("IPYTHONDIR not set")
			}
		})
	}
}
