package main

import (
	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/streamsink"
)

// artifactStore forwards to config.ArtifactStore.
func artifactStore(home string) *streamsink.Store { return config.ArtifactStore(home) }
