package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildIdentityIsTheBuild: the identity is the version and the Go
// build ID `go tool buildid` reads from the binary, so a copy of the
// binary elsewhere is the same identity (the path counted: two copies of
// one build replaced each other's background process at every command).
func TestBuildIdentityIsTheBuild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	sum := sha256.Sum256(bytes.TrimSpace(out))
	want := "v+" + hex.EncodeToString(sum[:6])
	if got := BuildIdentity("v"); got != want {
		t.Fatalf("BuildIdentity = %q, want %q", got, want)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.test")
	if err := os.WriteFile(cp, b, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(cp, "-test.run=TestBuildIdentityHelper", "-test.v").CombinedOutput()
	if err != nil {
		t.Fatalf("the copy: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "identity="+want+"\n") {
		t.Fatalf("the copy's identity is not %q:\n%s", want, out)
	}
}

// TestBuildIdentityHelper prints the identity of the binary running it,
// for TestBuildIdentityIsTheBuild's copy.
func TestBuildIdentityHelper(t *testing.T) {
	t.Logf("identity=%s\n", BuildIdentity("v"))
}

// TestGoBuildID reads both forms the linker writes.
func TestGoBuildID(t *testing.T) {
	note := func(id string) []byte {
		b := []byte{4, 0, 0, 0, byte(len(id)), 0, 0, 0, 4, 0, 0, 0, 'G', 'o', 0, 0}
		return append(append([]byte("\x7fELF junk Go\x00\x00 more"), b...), id+"\x00\x00pad"...)
	}
	tests := []struct {
		name string
		head []byte
		want string
	}{
		{"elf note", note("abc/def"), "abc/def"},
		{"text", []byte("xx\xff Go build ID: \"abc/def\"\n \xffyy"), "abc/def"},
		{"none", []byte("\x7fELF nothing here"), ""},
		{"cut off", []byte("\xff Go build ID: \"abc/d"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := goBuildID(tt.head); got != tt.want {
				t.Fatalf("goBuildID = %q, want %q", got, tt.want)
			}
		})
	}
}
