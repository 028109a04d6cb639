package config

import (
	"github.com/evalhost/evalhost/streamsink"
)

// ArtifactStore is where spilled output goes: $PI_ARTIFACTS_DIR (the
// caller's: never pruned), else <home>/artifacts, private and kept under
// $EVALHOST_ARTIFACTS_MAX; see [streamsink.StoreFromEnv]. The store is
// always usable: a non-nil error is a warning (a bad cap value, the default
// cap applies) for the caller to show.
func ArtifactStore(home string) (*streamsink.Store, error) {
	return streamsink.StoreFromEnv(home)
}
