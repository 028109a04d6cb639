package main

import (
	"fmt"
	"os"

	"github.com/evalhost/evalhost/streamsink"
)

// artifactStore is where spilled output goes: see streamsink.StoreFromEnv
// (PI_ARTIFACTS_DIR, EVALHOST_ARTIFACTS_MAX, pruning). A bad cap is a
// warning: the default cap applies.
func artifactStore(home string) *streamsink.Store {
	st, err := streamsink.StoreFromEnv(home)
	if err != nil {
		fmt.Fprintf(os.Stderr, "evalhost: %v\n", err)
	}
	return st
}
