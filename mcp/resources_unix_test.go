//go:build unix

package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// A FIFO swapped in between openArtifact's look at the file and its open
// (another user's, in a shared PI_ARTIFACTS_DIR) is refused at once: the
// open blocked for ever.
func TestReadArtifactRefusesAFIFOSwappedIn(t *testing.T) {
	session, srv := connect(t, nil)
	dir := srv.cfg.Store.Dir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "7.eval.log")
	if err := os.WriteFile(path, []byte("output"), 0o600); err != nil {
		t.Fatal(err)
	}
	artifactOpening = func(p string) {
		if p != path {
			return
		}
		if err := os.Remove(p); err != nil {
			t.Error(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { artifactOpening = nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := session.ReadResource(ctx, &sdk.ReadResourceParams{URI: "artifact://7.eval.log"})
	if err == nil {
		t.Fatalf("the FIFO was read: %+v", res.Contents[0])
	}
	if !strings.Contains(err.Error(), "was replaced while it was opened") {
		t.Errorf("%v; want an error saying the file was replaced", err)
	}
}

// A missing artifact's error keeps the SDK's code and says why it may be
// gone and what to do; it was "Resource not found" and nothing more.
func TestReadArtifactMissingSaysWhy(t *testing.T) {
	session, _ := connect(t, nil)
	for uri, want := range map[string]string{
		"artifact://99.eval.log":                                   "was removed (artifacts are kept 7 days",
		"artifact://..":                                            "names no artifact",
		"artifact://99.eval.log?offset=100":                        "run the cell again",
		"artifact://" + strings.Repeat("a", 100<<10) + ".eval.log": "names no artifact",
	} {
		_, err := session.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != sdk.CodeResourceNotFound || !strings.Contains(je.Message, want) {
			t.Errorf("%.80s: %.300v; want resource-not-found saying %q", uri, err, want)
		} else if len(je.Message) > 1024 {
			t.Errorf("%.80s…: a %d-byte message; the URI it repeats must be clipped", uri, len(je.Message))
		}
	}
}
