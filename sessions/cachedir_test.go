package sessions

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// Without a user cache dir the fallback is per user, so it is never another
// user's directory (which runner.Path would refuse).
func TestDefaultCacheDirFallbackIsPerUser(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if _, err := os.UserCacheDir(); err == nil {
		t.Skip("this platform has a user cache dir without $HOME")
	}
	if dir := defaultCacheDir(); !strings.HasSuffix(dir, "evalhost-"+strconv.Itoa(os.Getuid())) {
		t.Errorf("fallback cache dir %q is not per user", dir)
	}
}
