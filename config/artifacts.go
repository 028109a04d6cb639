package config

import (
	"os"

	"github.com/evalhost/evalhost/streamsink"
)

// ArtifactStore is where spilled output goes: $PI_ARTIFACTS_DIR, else
// <home>/artifacts. evalhost's own directory is pruned of artifacts older
// than streamsink.DefaultRetention here; a PI_ARTIFACTS_DIR belongs to the
// caller and is left as it is. A failed prune costs nothing but disk, so it
// is not reported.
func ArtifactStore(home string) *streamsink.Store {
	st := streamsink.NewStore(streamsink.ArtifactsDir(home))
	if os.Getenv("PI_ARTIFACTS_DIR") == "" {
		_, _ = st.Prune(streamsink.DefaultRetention)
	}
	return st
}
