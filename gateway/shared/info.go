package shared

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/evalhost/evalhost/gateway"
)

// Info is gateway.json: what a process needs to use, or stop, the shared
// local gateway of one interpreter.
type Info struct {
	URL        string    `json:"url"`
	PID        int       `json:"pid"`
	StartedAt  time.Time `json:"startedAt"`
	PythonPath string    `json:"pythonPath"`
	VenvPath   string    `json:"venvPath,omitempty"`
	Token      string    `json:"token"`
	// KernelDir holds its kernels' connection files and unix sockets
	// (kerneldir.go); empty for a gateway of an older evalhost, whose
	// kernels listen on TCP.
	KernelDir string `json:"kernelDir,omitempty"`
}

// Config is the client configuration for this gateway. Every connection
// is checked to end in a process of this user's before anything, the
// token first, is sent on it (verifyConn).
func (i Info) Config() gateway.Config {
	return gateway.Config{URL: i.URL, Token: i.Token, VerifyConn: verifyConn}
}

// root is <home>/python-gateway. Each interpreter's gateway has a
// directory of its own below it, named by key, so that processes that need
// different interpreters neither share nor replace each other's gateway.
// A gateway.json directly in root was written by an evalhost older than
// that rule; only Stop and Status look at it.
func root(home string) string { return filepath.Join(home, "python-gateway") }

// key names python's directory: a hash, since a path may hold anything.
func key(python string) string {
	sum := sha256.Sum256([]byte(python))
	return hex.EncodeToString(sum[:8])
}

// dirFor is the directory of python's gateway.
func dirFor(home, python string) string { return filepath.Join(root(home), key(python)) }

func infoPath(dir string) string { return filepath.Join(dir, "gateway.json") }
func lockPath(dir string) string { return filepath.Join(dir, "gateway.lock") }
func logPath(dir string) string  { return filepath.Join(dir, "gateway.log") }

// recordedDirs lists the directories under home that record a gateway: the
// legacy root first, then one per interpreter.
func recordedDirs(home string) ([]string, error) {
	var dirs []string
	if _, err := os.Stat(infoPath(root(home))); err == nil {
		dirs = append(dirs, root(home))
	}
	ents, err := os.ReadDir(root(home))
	if errors.Is(err, os.ErrNotExist) {
		return dirs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list gateways: %w", err)
	}
	for _, e := range ents {
		d := filepath.Join(root(home), e.Name())
		if _, err := os.Stat(infoPath(d)); e.IsDir() && err == nil {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// readInfo returns the recorded gateway; os.ErrNotExist when none is.
func readInfo(dir string) (Info, error) {
	var i Info
	raw, err := os.ReadFile(infoPath(dir))
	if err != nil {
		return i, err
	}
	if err := json.Unmarshal(raw, &i); err != nil {
		return i, fmt.Errorf("gateway info %s is not valid JSON (it is rewritten on the next start): %w", infoPath(dir), err)
	}
	if i.URL == "" || i.PID <= 0 {
		return i, fmt.Errorf("gateway info %s lacks url or pid (it is rewritten on the next start)", infoPath(dir))
	}
	return i, nil
}

func writeInfo(dir string, i Info) error {
	raw, err := json.MarshalIndent(i, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(infoPath(dir), append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("write gateway info %s: %w", infoPath(dir), err)
	}
	return nil
}

func removeInfo(dir string) error {
	if err := os.Remove(infoPath(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove gateway info: %w", err)
	}
	return nil
}
