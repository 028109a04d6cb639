package sessions

import (
	"testing"
	"time"
)

// The notice a timed-out cell ends with names the timeout in whole seconds,
// rounded as the reference runtime rounds them, never less than 1.
func TestTimeoutNoticeRoundsSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{time.Second, "Command timed out after 1 seconds\n"},
		{1500 * time.Millisecond, "Command timed out after 2 seconds\n"},
		{2700 * time.Millisecond, "Command timed out after 3 seconds\n"},
		{2200 * time.Millisecond, "Command timed out after 2 seconds\n"},
		{200 * time.Millisecond, "Command timed out after 1 seconds\n"},
		{600 * time.Second, "Command timed out after 600 seconds\n"},
	} {
		if got := timeoutNotice(tc.d); got != tc.want {
			t.Errorf("timeoutNotice(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// The reference runtime's allow-list (000_*.txt: "core vars like PATH, HOME,
// locale vars, VIRTUAL_ENV, PYTHONPATH, etc.") passes the loader path and the
// ssh agent; its deny-list still wins over the PI_ prefix.
func TestAllowEnvMatchesReferenceAllowList(t *testing.T) {
	for _, name := range []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
		"TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TMPDIR", "TEMP", "TMP",
		"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
		"SSH_AUTH_SOCK", "SSH_AGENT_PID", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
		"VIRTUAL_ENV", "PYTHONPATH", "LD_LIBRARY_PATH", "PI_SESSION_FILE", "PI_ARTIFACTS_DIR",
	} {
		if !AllowEnv(name) {
			t.Errorf("AllowEnv(%q) = false, want true (on the reference allow-list)", name)
		}
	}
	for _, name := range []string{
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY",
		"OPENROUTER_API_KEY", "PERPLEXITY_API_KEY", "PERPLEXITY_COOKIES", "EXA_API_KEY",
		"AZURE_OPENAI_API_KEY", "MISTRAL_API_KEY", "PI_API_KEY", "RANDOM_VAR",
	} {
		if AllowEnv(name) {
			t.Errorf("AllowEnv(%q) = true, want false", name)
		}
	}
}
