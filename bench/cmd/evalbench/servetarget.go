package main

import (
	"fmt"
	"sync/atomic"
)

// serveTarget drives `evalhost serve` over NDJSON.
type serveTarget struct {
	c   *serveClient
	seq atomic.Int64
}

func (s *serveTarget) run(session, mode, code string, interrupt bool, on func(event)) (string, error) {
	id := fmt.Sprintf("b%d", s.seq.Add(1))
	cellEnd, _, err := s.c.eval(id, session, mode, code, func(r reply) {
		if on != nil {
			on(event{typ: r.Type, data: r.Data, pid: r.PID, at: r.At})
		}
		if interrupt && r.Type == "started" {
			interruptLater(func() { _ = s.c.send(map[string]any{"op": "cancel", "id": id}) }, on)
		}
	})
	if err != nil {
		return "", err
	}
	return cellEnd.Status, nil
}

func (s *serveTarget) closeSession(session string) {
	_ = s.c.send(map[string]any{"op": "close", "session": session})
}

func (s *serveTarget) hostPID() int { return s.c.pid }
