package main

import (
	"strings"
	"testing"
)

func TestSettingsNotice(t *testing.T) {
	base := map[string]string{"PI_ARTIFACTS_DIR": "/a", "EVALHOST_DAEMON_IDLE": "30m0s",
		"PI_PYTHON_GATEWAY_TOKEN": secretDigest("tok-one")}
	with := func(kv ...string) map[string]string { // base, with keys set to values
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		theirs map[string]string
		mine   map[string]string
		want   []string // in the notice; none: no notice
		not    []string
	}{
		{name: "same", theirs: base, mine: with("PI_PY", "py cells")}, // a key one side lacks is not compared
		{name: "process reports none", theirs: nil, mine: with("PI_ARTIFACTS_DIR", "/b")},
		{name: "artifacts dir", theirs: base, mine: with("PI_ARTIFACTS_DIR", "/b"),
			want: []string{"(pid 42) keeps the settings", "PI_ARTIFACTS_DIR is /a there, /b here", `"evalhost daemon stop"`}},
		{name: "idle only, lower key", theirs: base, mine: with("EVALHOST_DAEMON_IDLE", "2h0m0s"),
			want: []string{"keeps the limits", "EVALHOST_DAEMON_IDLE is 30m0s there, 2h0m0s here", "started anew"},
			not:  []string{"keeps the settings"}},
		{name: "idle with a directory", theirs: base, mine: with("EVALHOST_DAEMON_IDLE", "2h0m0s", "PI_ARTIFACTS_DIR", "/b"),
			want: []string{"keeps the settings", "EVALHOST_DAEMON_IDLE is 30m0s there"}},
		{name: "token differs", theirs: base, mine: with("PI_PYTHON_GATEWAY_TOKEN", secretDigest("tok-two")),
			want: []string{"PI_PYTHON_GATEWAY_TOKEN differs (its value is not shown)"}, not: []string{"tok", "sha256"}},
		{name: "token unset here", theirs: base, mine: with("PI_PYTHON_GATEWAY_TOKEN", secretDigest("")),
			want: []string{"PI_PYTHON_GATEWAY_TOKEN is set there, unset here"}, not: []string{"tok", "sha256"}},
		{name: "control characters quoted", theirs: base, mine: with("PI_ARTIFACTS_DIR", "/b\n[evalhost: fake]"),
			want: []string{`"/b\n[evalhost: fake]" here`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := settingsNotice(42, tc.theirs, tc.mine)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("notice %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("notice %q lacks %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(strings.ReplaceAll(got, "PI_PYTHON_GATEWAY_TOKEN", ""), n) {
					t.Errorf("notice %q holds %q", got, n)
				}
			}
		})
	}
}
