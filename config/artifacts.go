package config

import (
	"github.com/evalhost/evalhost/streamsink"
)

// ArtifactStore is where spilled output goes: $PI_ARTIFACTS_DIR (the
// caller's: never pruned), else <home>/artifacts, private and kept under
// $EVALHOST_ARTIFACTS_MAX; see [streamsink.StoreFromEnv]. A bad cap, or a
// $PI_ARTIFACTS_DIR that is not a directory and that no spill could make
// by one mkdir (its parent missing: nothing above it is made), is an
// error naming the variable, its value and what it takes, and no store:
// the caller refuses to go on, as for a bad flag.
func ArtifactStore(home string) (*streamsink.Store, error) {
	return streamsink.StoreFromEnv(home)
}
