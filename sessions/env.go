package sessions

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// allowedEnv are the variables an interpreter inherits from the host.
var allowedEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "TERM": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TMPDIR": true, "TEMP": true, "TMP": true,
	"PWD": true, "COLUMNS": true, "LINES": true, "COLORTERM": true, "NO_COLOR": true,
	"VIRTUAL_ENV": true, "CONDA_PREFIX": true, "CONDA_DEFAULT_ENV": true, "PYTHONPATH": true,
	"PYTHONHOME": true, "PYTHONUTF8": true, "PYTHONIOENCODING": true, "PYTHONWARNINGS": true,
	"PYTHONDONTWRITEBYTECODE": true, "PYENV_VERSION": true, "PYENV_ROOT": true,
	"MPLBACKEND": true, "MPLCONFIGDIR": true, "SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
	"REQUESTS_CA_BUNDLE": true, "CURL_CA_BUNDLE": true, "PIP_INDEX_URL": true,
	"PIP_EXTRA_INDEX_URL": true, "PIP_CERT": true, "HTTP_PROXY": true, "HTTPS_PROXY": true,
	"NO_PROXY": true, "http_proxy": true, "https_proxy": true, "no_proxy": true,
	"EVALHOST_HOME": true,
	// The reference runtime's allow-list has these too: without them a Python
	// or extension built against libraries outside the loader's default path
	// cannot load them, and git/ssh in a cell cannot reach the user's agent.
	"LD_LIBRARY_PATH": true, "SSH_AUTH_SOCK": true, "SSH_AGENT_PID": true,
	"TERM_PROGRAM": true, "TERM_PROGRAM_VERSION": true,
}

var allowedEnvPrefixes = []string{"LC_", "XDG_", "PI_"}

// deniedEnv are secrets stripped even when a prefix would allow them.
var deniedEnv = map[string]bool{
	"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "GEMINI_API_KEY": true,
	"GOOGLE_API_KEY": true, "MISTRAL_API_KEY": true, "GROQ_API_KEY": true,
	"XAI_API_KEY": true, "DEEPSEEK_API_KEY": true, "OPENROUTER_API_KEY": true,
	"COHERE_API_KEY": true, "PERPLEXITY_API_KEY": true, "TOGETHER_API_KEY": true,
	"FIREWORKS_API_KEY": true, "AZURE_OPENAI_API_KEY": true, "HF_TOKEN": true,
	"HUGGING_FACE_HUB_TOKEN": true, "GITHUB_TOKEN": true, "GH_TOKEN": true,
	"AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "PI_API_KEY": true,
}

var deniedEnvSuffixes = []string{"_API_KEY", "_SECRET", "_PASSWORD", "_TOKEN"}

// bridgeEnv are evalhost's own variables that the suffix rule must let through.
var bridgeEnv = map[string]bool{
	"PI_TOOL_BRIDGE_TOKEN": true, "PI_PYTHON_GATEWAY_TOKEN": true,
}

// AllowEnv reports whether the variable name may reach an interpreter.
func AllowEnv(name string) bool {
	if bridgeEnv[name] {
		return true
	}
	if deniedEnv[name] {
		return false
	}
	for _, s := range deniedEnvSuffixes {
		if strings.HasSuffix(name, s) {
			return false
		}
	}
	if allowedEnv[name] {
		return true
	}
	for _, p := range allowedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// FilterEnv keeps the allowed entries of a KEY=VALUE list, sorted by name.
func FilterEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && AllowEnv(name) {
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
}

// setEnv returns env with name set to value, replacing an earlier entry.
func setEnv(env []string, name, value string) []string {
	prefix := name + "="
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, prefix) })
	return append(env, prefix+value)
}

func getEnv(env []string, name string) string {
	prefix := name + "="
	for _, kv := range env {
		if strings.HasPrefix(kv, prefix) {
			return kv[len(prefix):]
		}
	}
	return ""
}

// prependPath puts dir first on the PATH of env.
func prependPath(env []string, dir string) []string {
	path := getEnv(env, "PATH")
	if path == "" {
		return setEnv(env, "PATH", dir)
	}
	return setEnv(env, "PATH", dir+string(os.PathListSeparator)+path)
}

// checkCwd says whether dir can be a session's working directory.
func checkCwd(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &CwdError{Dir: dir, Err: err}
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", &CwdError{Dir: abs, Err: err}
	}
	if !st.IsDir() {
		return "", &CwdError{Dir: abs, Err: errNotDir}
	}
	return abs, nil
}
