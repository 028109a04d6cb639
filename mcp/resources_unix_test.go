//go:build unix

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What another user may plant in a shared PI_ARTIFACTS_DIR is not read: a
// symlink was followed to any file of the user's, and a FIFO blocked the
// read for ever.
func TestReadArtifactRefusesPlantedFiles(t *testing.T) {
	session, srv := connect(t, nil)
	dir := srv.cfg.Store.Dir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("private key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "5.eval.log")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "6.eval.log"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"5.eval.log", "6.eval.log"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := session.ReadResource(ctx, &sdk.ReadResourceParams{URI: "artifact://" + id})
		cancel()
		if err == nil {
			t.Fatalf("%s was read: %+v", id, res.Contents[0])
		}
		if !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v; want an error saying it is not a regular file", id, err)
		}
	}
}
