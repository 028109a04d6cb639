package main

import (
	"fmt"
	"os"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/streamsink"
)

// artifactStore is config.ArtifactStore with its warning (a bad
// EVALHOST_ARTIFACTS_MAX) shown on stderr: the default cap applies.
func artifactStore(home string) *streamsink.Store {
	st, err := config.ArtifactStore(home)
	if err != nil {
		fmt.Fprintf(os.Stderr, "evalhost: %v\n", err)
	}
	return st
}
