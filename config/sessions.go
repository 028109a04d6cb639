package config

import (
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// Sessions is the sessions.Config the evalhost command starts from: the
// checked [Home], the [Starters] of the backend and PI_PY, and the
// [ArtifactStore] in Sink.Store. Callers set the rest (Python, timeouts,
// hooks, Sink bounds) on the result. A bad value of what they read is the
// error the evalhost command refuses it with.
func Sessions(b Backend) (sessions.Config, error) {
	home, err := Home()
	if err != nil {
		return sessions.Config{}, err
	}
	starters, err := Starters(home, b)
	if err != nil {
		return sessions.Config{}, err
	}
	// As the command: a bad cap is not taken for the default (it decides
	// which outputs go), nor a PI_ARTIFACTS_DIR no spill could make left
	// for every spill's notice to tell.
	store, err := ArtifactStore(home)
	if err != nil {
		return sessions.Config{}, err
	}
	return sessions.Config{Home: home, Starters: starters,
		Sink: streamsink.Options{Store: store}}, nil
}
