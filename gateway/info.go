package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Info is gateway.json: what a process needs to use, or stop, the shared
// local gateway.
type Info struct {
	URL        string    `json:"url"`
	PID        int       `json:"pid"`
	StartedAt  time.Time `json:"startedAt"`
	PythonPath string    `json:"pythonPath"`
	VenvPath   string    `json:"venvPath,omitempty"`
	Token      string    `json:"token"`
}

// Config is the client configuration for this gateway.
func (i Info) Config() Config { return Config{URL: i.URL, Token: i.Token} }

// dir is <home>/python-gateway.
func dir(home string) string { return filepath.Join(home, "python-gateway") }

func infoPath(home string) string { return filepath.Join(dir(home), "gateway.json") }
func lockPath(home string) string { return filepath.Join(dir(home), "gateway.lock") }
func logPath(home string) string  { return filepath.Join(dir(home), "gateway.log") }

// readInfo returns the recorded gateway; os.ErrNotExist when none is.
func readInfo(home string) (Info, error) {
	var i Info
	raw, err := os.ReadFile(infoPath(home))
	if err != nil {
		return i, err
	}
	if err := json.Unmarshal(raw, &i); err != nil {
		return i, fmt.Errorf("gateway info %s is not valid JSON (it is rewritten on the next start): %w", infoPath(home), err)
	}
	if i.URL == "" || i.PID <= 0 {
		return i, fmt.Errorf("gateway info %s lacks url or pid (it is rewritten on the next start)", infoPath(home))
	}
	return i, nil
}

func writeInfo(home string, i Info) error {
	raw, err := json.MarshalIndent(i, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(infoPath(home), append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("write gateway info %s: %w", infoPath(home), err)
	}
	return nil
}

func removeInfo(home string) error {
	if err := os.Remove(infoPath(home)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove gateway info: %w", err)
	}
	return nil
}
