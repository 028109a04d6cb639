package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// apiTarget drives a sessions.Registry in this process.
type apiTarget struct{ reg *sessions.Registry }

// newAPITarget uses the default starters (the runner) when starters is nil.
func newAPITarget(python, home string, maxSessions int, starters map[string]sessions.Starter) *apiTarget {
	return &apiTarget{reg: sessions.New(sessions.Config{
		Home: home, Python: python, MaxSessions: maxSessions, IdleTimeout: -1, Starters: starters,
		Sink: streamsink.Options{Store: streamsink.NewStore(filepath.Join(home, "artifacts"))},
	})}
}

func (a *apiTarget) run(session, mode, code string, interrupt bool, on func(event)) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := sessions.Request{Session: session, Mode: mode,
		Cells: []sessions.Cell{{Language: sessions.LangPython, Code: code, Timeout: 600 * time.Second}}}
	res, err := a.reg.Eval(ctx, req, func(_ int, f frames.Frame) {
		if on != nil {
			on(event{typ: f.Type.String(), data: f.Data, pid: f.PID, at: time.Now()})
		}
		if interrupt && f.Type == frames.TypeStarted {
			interruptLater(cancel, on)
		}
	})
	if err != nil {
		return "", err
	}
	c := res.Cells[0]
	if p := c.Output.ArtifactPath; p != "" {
		os.Remove(p) // floods would fill the disk
	}
	if c.Message != "" && c.Status != sessions.StatusKilled && c.Status != sessions.StatusOK {
		return string(c.Status), fmt.Errorf("%s", c.Message)
	}
	return string(c.Status), nil
}

func (a *apiTarget) closeSession(s string) { a.reg.CloseSession(s) }
func (a *apiTarget) hostPID() int          { return os.Getpid() }
