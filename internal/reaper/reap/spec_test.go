package reap

import (
	"reflect"
	"strings"
	"testing"
)

func TestSpecRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
	}{
		{"plain", Spec{Path: "/usr/bin/python3", Argv: []string{"python3", "runner.py"}, Env: []string{"A=1", "B="}, Dir: "/tmp"}},
		{"terminal, no env, own dir", Spec{Path: "/bin/bash", Argv: []string{"bash"}, Env: []string{}, TTY: true}},
		{"terminal on fd 4", Spec{Path: "/usr/bin/python3", Argv: []string{"python3"}, Env: []string{}, TTY: true, TTYFd: 4}},
		{"empty and odd arguments", Spec{Path: "sh", Argv: []string{"sh", "", "a\nb", "=x"}, Env: []string{"X=a=b"}}},
		{"idle", Spec{Path: "/usr/bin/python3", Argv: []string{"python3", "runner.py"}, Env: []string{}, Idle: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := string(tc.spec.Encode())
			head, body, _ := strings.Cut(msg, "\n")
			if head != itoa(len(body)) {
				t.Fatalf("length line %q for a %d-byte body", head, len(body))
			}
			got, ok := decodeSpec(body)
			if !ok || !reflect.DeepEqual(got, tc.spec) {
				t.Errorf("decoded %+v (ok %v), want %+v", got, ok, tc.spec)
			}
		})
	}
}

func TestSpecRefused(t *testing.T) {
	good := Spec{Path: "/bin/sh", Argv: []string{"sh"}}.Encode()
	_, body, _ := strings.Cut(string(good), "\n")
	tests := []struct{ name, body string }{
		{"empty", ""},
		{"no final NUL", strings.TrimSuffix(body, "\x00")},
		{"other magic", strings.Replace(body, specMagic, "evalhost-spec-1", 1)},
		{"no path", strings.Replace(body, "/bin/sh", "", 1)},
		{"more arguments than fields", strings.Replace(body, "\x001\x00", "\x009\x00", 1)},
		{"no argv[0]", strings.Replace(body, "\x001\x00sh\x00", "\x000\x00", 1)},
		{"a terminal of no fd", strings.Replace(body, "\x00-\x00", "\x00ttyx\x00", 1)},
		{"a terminal on fd 0 spelled tty0", strings.Replace(body, "\x00-\x00", "\x00tty0\x00", 1)},
		{"a terminal on fd 04", strings.Replace(body, "\x00-\x00", "\x00tty04\x00", 1)},
		{"a terminal on a negative fd", strings.Replace(body, "\x00-\x00", "\x00tty-1\x00", 1)},
		{"idle spelled otherwise", strings.Replace(body, "\x00-\x00-\x00", "\x00-\x00Idle\x00", 1)},
		{"no idle field (the first version's message)", strings.Replace(body, "\x00-\x00-\x00", "\x00-\x00", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if s, ok := decodeSpec(tc.body); ok {
				t.Errorf("decodeSpec(%q) = %+v, want refused", tc.body, s)
			}
		})
	}
}

func FuzzDecodeSpec(f *testing.F) {
	for _, s := range []Spec{
		{Path: "/bin/sh", Argv: []string{"sh", "-c", "x"}, Env: []string{"A=1"}},
		{Path: "/usr/bin/python3", Argv: []string{"python3", "runner.py"}, Dir: "/tmp", TTY: true, TTYFd: 4, Idle: true},
	} {
		_, body, _ := strings.Cut(string(s.Encode()), "\n") // decodeSpec takes the body
		f.Add(body)
	}
	f.Add("3\nabc")
	f.Fuzz(func(t *testing.T, body string) {
		s, ok := decodeSpec(body)
		if !ok {
			return
		}
		// What decodes encodes back to the same body.
		_, again, _ := strings.Cut(string(s.Encode()), "\n")
		if again != body {
			t.Errorf("decodeSpec(%q) = %+v, which encodes as %q", body, s, again)
		}
	})
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}
