package gateway

import (
	"encoding/json"
	"maps"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"
)

// Kernel request values: a kernel create may carry an "env" object, of
// which a Jupyter kernel gateway and Enterprise Gateway pass the KERNEL_*
// entries on to the kernel's launch. Enterprise Gateway reads several:
// KERNEL_USERNAME (whose kernel it is: it refuses root unless configured
// otherwise, checks authorized_users, and impersonates that user when
// impersonation is on), KERNEL_LAUNCH_TIMEOUT, KERNEL_WORKING_DIR (with
// EG_MIRROR_WORKING_DIRS), KERNEL_NAMESPACE, KERNEL_IMAGE,
// KERNEL_SERVICE_ACCOUNT_NAME, KERNEL_UID/GID, KERNEL_CPUS, KERNEL_MEMORY,
// KERNEL_GPUS (Kubernetes, Docker) and KERNEL_REMOTE_HOST (SSH hosts).
const (
	envUsername      = "KERNEL_USERNAME"
	envLaunchTimeout = "KERNEL_LAUNCH_TIMEOUT"
	envWorkingDir    = "KERNEL_WORKING_DIR"
)

// KernelEnvFrom picks the kernel request values out of an environment
// (os.Environ's form): every KERNEL_* variable with a value, and
// KERNEL_USERNAME set to the current user's login name unless environ sets
// it. Put the result in Config.KernelEnv for an external gateway.
func KernelEnvFrom(environ []string) map[string]string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, "KERNEL_") && len(k) > len("KERNEL_") && v != "" {
			env[k] = v
		}
	}
	if env[envUsername] == "" {
		if name := loginName(); name != "" {
			env[envUsername] = name
		}
	}
	return env
}

// loginName is the current user's name: the account database's, else $USER.
func loginName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// createBody is the kernel create request: the kernelspec name when one is
// configured, and an env. An env, even empty, makes kernel_gateway (and
// Enterprise Gateway) launch the kernel with its PATH and the variables it
// is configured to pass, instead of its whole environment: that of
// whichever evalhost process started the shared gateway; the caller's own
// environment is applied inside the kernel (setupCode). When the client
// has kernel request values, the env holds those plus this start's own (the
// start timeout as KERNEL_LAUNCH_TIMEOUT, so the gateway waits for the
// kernel as long as evalhost does, and the cwd as KERNEL_WORKING_DIR);
// values the user set win.
func (c *Client) createBody(opts KernelOptions, timeout time.Duration) []byte {
	env := map[string]string{}
	if c.kernelEnv != nil {
		env = maps.Clone(c.kernelEnv)
		if _, ok := env[envLaunchTimeout]; !ok && timeout > 0 {
			env[envLaunchTimeout] = strconv.Itoa(int(timeout.Seconds()))
		}
		if _, ok := env[envWorkingDir]; !ok && opts.Cwd != "" {
			env[envWorkingDir] = opts.Cwd
		}
	}
	body := map[string]any{"env": env}
	if c.kernel != "" {
		body["name"] = c.kernel
	}
	raw, _ := json.Marshal(body)
	return raw
}
