package config

import (
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// Sessions is the sessions.Config the evalhost command starts from: the
// checked [Home], the [Starters] of the backend and PI_PY, and the
// [ArtifactStore] in Sink.Store. Callers set the rest (Python, timeouts,
// hooks, Sink bounds) on the result.
func Sessions(b Backend) (sessions.Config, error) {
	home, err := Home()
	if err != nil {
		return sessions.Config{}, err
	}
	starters, err := Starters(home, b)
	if err != nil {
		return sessions.Config{}, err
	}
	// A bad artifacts cap only means the default one: not worth failing for.
	store, _ := ArtifactStore(home)
	return sessions.Config{Home: home, Starters: starters,
		Sink: streamsink.Options{Store: store}}, nil
}
