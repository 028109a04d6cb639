package daemon

import (
	"bufio"
	"maps"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/sessions"
)

// TestHelloSettings: the hello reports Config.Settings, which Dial reads
// into Client.Settings; a process with none (as one that predates them)
// writes serve's hello unchanged, and its client gets nil: nothing to
// compare.
func TestHelloSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings map[string]string
	}{
		{"none", nil},
		{"some", map[string]string{"PI_ARTIFACTS_DIR": "/a", "EVALHOST_DAEMON_IDLE": "30m0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := PathsFor(t.TempDir())
			serveConfig(t, Config{Paths: paths, Version: "test", Settings: tc.settings,
				Sessions: sessions.Config{Home: filepath.Dir(paths.Dir)}})
			c, err := Dial(paths)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if !maps.Equal(c.Settings, tc.settings) || (tc.settings == nil) != (c.Settings == nil) {
				t.Errorf("Settings %v, want %v", c.Settings, tc.settings)
			}
			nc, err := net.Dial("unix", paths.Socket)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			line, err := bufio.NewReader(nc).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(line, `"settings"`); got != (tc.settings != nil) {
				t.Errorf("hello %s: settings given %v", line, got)
			}
		})
	}
}
