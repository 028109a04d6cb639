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
	// Which devices and how many threads the numeric libraries use, and
	// Python's own hash seed and breakpoint hook: without them a script
	// takes every GPU and core, or stops in a debugger it was told to skip.
	"CUDA_VISIBLE_DEVICES": true, "HIP_VISIBLE_DEVICES": true, "ROCR_VISIBLE_DEVICES": true,
	"OMP_NUM_THREADS": true, "MKL_NUM_THREADS": true, "OPENBLAS_NUM_THREADS": true,
	"VECLIB_MAXIMUM_THREADS": true, "NUMEXPR_NUM_THREADS": true,
	"PYTHONHASHSEED": true, "PYTHONBREAKPOINT": true,
}

// allowedEnvPrefixes pass whole families of variables, as the reference's
// allow-list does; a name in them that looks like a secret is still denied
// (secretWords), since a prefix vouches for no particular variable.
var allowedEnvPrefixes = []string{"LC_", "XDG_", "PI_"}

// deniedEnv are secrets stripped whatever else would allow them.
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

// deniedEnvPrefixes are evalhost's own variables as an outer evalhost (or
// the user's shell) set them: no interpreter uses the host's copy. The
// gateway token is for evalhost's client of an external gateway, never for
// code in a kernel; the tool bridge's variables are set per interpreter by
// the bridge that serves it (Config.EnvHook), after filtering, and an outer
// bridge's would let a cell call another process's tools.
var deniedEnvPrefixes = []string{"PI_PYTHON_GATEWAY_TOKEN", "PI_TOOL_BRIDGE_"}

// secretWords deny a prefix-allowed name when one of its _-separated words
// is one of them; secretParts when a word contains one ("PI_SECRETKEY",
// "PI_AUTHTOKEN"). Words, not substrings, for the short ones: KEYBOARD and
// AUTHOR are not secrets.
var (
	secretWords = map[string]bool{
		"KEY": true, "KEYS": true, "AUTH": true, "OAUTH": true, "PASS": true, "PWD": true,
		"COOKIE": true, "COOKIES": true, "CREDS": true, "SIGNING": true, "BEARER": true,
		"JWT": true, "SESSIONKEY": true, "PASSPHRASE": true,
	}
	secretParts = []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "PRIVATE"}
)

// AllowEnv reports whether the host's variable name may reach an
// interpreter: on the allow-list, or in an allowed prefix and not named like
// a secret, and never a denied secret.
func AllowEnv(name string) bool {
	if deniedEnv[name] {
		return false
	}
	for _, s := range deniedEnvSuffixes {
		if strings.HasSuffix(name, s) {
			return false
		}
	}
	for _, p := range deniedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	if allowedEnv[name] {
		return true
	}
	for _, p := range allowedEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return !secretName(name)
		}
	}
	return false
}

// secretName reports whether a name looks like it holds a secret.
func secretName(name string) bool {
	for _, w := range strings.Split(strings.ToUpper(name), "_") {
		if secretWords[w] {
			return true
		}
		for _, p := range secretParts {
			if strings.Contains(w, p) {
				return true
			}
		}
	}
	return false
}

// FilterEnv keeps the allowed entries of a KEY=VALUE list, sorted by name,
// with the credentials taken out of every URL in their values.
func FilterEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && AllowEnv(name) {
			out = append(out, name+"="+StripURLCredentials(name, value))
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

// checkCwd says whether dir can be a session's working directory, and
// which directory it is (cwdid.go).
func checkCwd(dir string) (string, cwdID, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", cwdID{}, &CwdError{Dir: dir, Err: err}
	}
	id, isDir, err := statCwd(abs)
	if err != nil {
		return "", cwdID{}, &CwdError{Dir: abs, Err: err}
	}
	if !isDir {
		return "", cwdID{}, &CwdError{Dir: abs, Err: errNotDir}
	}
	if err := canEnter(abs); err != nil {
		return "", cwdID{}, &CwdError{Dir: abs, Err: err}
	}
	return abs, id, nil
}
