package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/evalhost/evalhost/internal/timeline"
)

// Interpreter is a resolved Python: the real executable (a binary as found,
// a version-manager shim resolved through sys.executable and cached on disk,
// see resolve_cache.go) and where it came from.
type Interpreter struct {
	Path     string   // what to exec
	Source   string   // "--python", "VIRTUAL_ENV", "CONDA_PREFIX", ".venv", "venv", "managed venv", "PATH"
	Version  string   // e.g. "3.11.7"; "" for a binary until its ready frame says
	BinDir   string   // a venv's bin directory, put first on PATH; empty otherwise
	Resolved string   // how Path was found: started directly, probed, or cached
	Key      []string // for a shim: what its cached resolution depends on

	cacheFile, probeKey string // a shim's cache entry, dropped by VerifyStart
}

// ProbedVersion is py's version ("3.14.10"), asking the interpreter when
// it was resolved without asking (a binary, whose Version is ""), as a
// shim is asked: in a process group of its own, killed whole, within
// timeout (0: DefaultProbeTimeout).
func (py Interpreter) ProbedVersion(timeout time.Duration) (string, error) {
	if py.Version != "" {
		return py.Version, nil
	}
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	res := runProbe(py.Path, "", timeout)
	return res.version, res.err
}

type candidate struct {
	source, path, binDir string
	refused              error // a cwd venv another user could have put there or changed (trustdir)
}

// probeCache remembers shims' answers in this process, beside the disk
// cache: a probe costs one interpreter start through the shim.
var probeCache sync.Map // shimKey -> probeResult

type probeResult struct {
	exe, version string
	err          error
	// Set by resolveCandidate.
	how       string
	key       []string
	cacheFile string
	probeKey  string
}

// ResolveInterpreter picks the Python for a session in DESIGN.md's order:
// explicit, VIRTUAL_ENV, CONDA_PREFIX, <cwd>/.venv, <cwd>/venv, the managed
// venv under home, then python3/python on PATH. getenv reads the host's
// environment (os.Getenv in production). Each candidate must answer within
// timeout (0: DefaultProbeTimeout).
func ResolveInterpreter(explicit, cwd, home string, getenv func(string) string, timeout time.Duration) (py Interpreter, err error) {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	var tried []Tried
	defer func() { timeline.Mark("resolve", "python", py.Path, "how", py.Resolved) }()
	for _, c := range candidates(explicit, cwd, home, getenv) {
		if c.refused != nil {
			// Not a fallback: the interpreter the user meant may be an
			// impostor, and any other would run their code unasked.
			return Interpreter{}, &UntrustedVenvError{Source: c.source, Path: c.path, Err: c.refused}
		}
		res := resolveCandidate(c, cwd, home, getenv, timeout)
		if res.err != nil {
			tried = append(tried, Tried{Source: c.source, Path: c.path, Err: res.err})
			if c.source == "--python" {
				// An explicit choice that fails is an error, not a fallback.
				return Interpreter{}, &InterpreterError{Tried: tried}
			}
			continue
		}
		return Interpreter{Path: res.exe, Source: c.source, Version: res.version, BinDir: c.binDir,
			Resolved: res.how, Key: res.key, cacheFile: res.cacheFile, probeKey: res.probeKey}, nil
	}
	return Interpreter{}, &InterpreterError{Tried: tried}
}

// managedVenv is the home's managed venv.
const managedVenv = "python-env"

func candidates(explicit, cwd, home string, getenv func(string) string) []candidate {
	var out []candidate
	if explicit != "" {
		path := explicit
		if !strings.ContainsRune(explicit, os.PathSeparator) {
			if p, err := lookPath(explicit); err == nil {
				path = p
			}
		}
		return append(out, candidate{source: "--python", path: path, binDir: venvBin(path)})
	}
	venv := func(source, root string) {
		if root != "" {
			bin := filepath.Join(root, "bin")
			out = append(out, candidate{source: source, path: filepath.Join(bin, "python"), binDir: bin})
		}
	}
	venv("VIRTUAL_ENV", getenv("VIRTUAL_ENV"))
	venv("CONDA_PREFIX", getenv("CONDA_PREFIX"))
	for _, dir := range []string{".venv", "venv"} {
		root := filepath.Join(cwd, dir)
		if _, err := os.Stat(filepath.Join(root, "bin", "python")); err == nil {
			venv(dir, root)
			out[len(out)-1].refused = judgeVenv(cwd, dir, SafeDirectories(home))
		}
	}
	if home != "" {
		root := filepath.Join(home, managedVenv)
		if _, err := os.Stat(filepath.Join(root, "bin", "python")); err == nil {
			venv("managed venv", root)
		}
	}
	for _, name := range []string{"python3", "python"} {
		if p, err := lookPath(name); err == nil {
			out = append(out, candidate{source: "PATH", path: p})
		} else {
			out = append(out, candidate{source: "PATH", path: name})
		}
	}
	return out
}

// venvBin returns the bin directory of the venv an executable lives in.
func venvBin(exe string) string {
	bin := filepath.Dir(exe)
	if _, err := os.Stat(filepath.Join(filepath.Dir(bin), "pyvenv.cfg")); err == nil {
		return bin
	}
	return ""
}

// lookPathCache remembers where a name was found on PATH: every request
// resolves its interpreter, and searching PATH each time cost more than a
// warm cell. Keyed by PATH too; only hits are kept, like probeCache.
var lookPathCache sync.Map // name + "\x00" + PATH -> path

func lookPath(name string) (string, error) {
	key := name + "\x00" + os.Getenv("PATH")
	if p, ok := lookPathCache.Load(key); ok {
		return p.(string), nil
	}
	p, err := exec.LookPath(name)
	if err == nil {
		lookPathCache.Store(key, p)
	}
	return p, err
}

// probeFlight runs one probe per path at a time: concurrent first requests
// (a client opening several sessions at once) all miss probeCache, and each
// used to start the interpreter to ask it the same question.
var probeFlight singleflight.Group

// probe asks a shim, run in dir (a shim reads the version files there),
// what it runs; key is everything its answer depends on (shimKey).
func probe(path, key, dir string, timeout time.Duration) probeResult {
	if v, ok := probeCache.Load(key); ok {
		return v.(probeResult)
	}
	v, _, _ := probeFlight.Do(key, func() (any, error) {
		if v, ok := probeCache.Load(key); ok {
			return v, nil // a flight that just ended stored it
		}
		res := runProbe(path, dir, timeout)
		res.probeKey = key
		if res.err == nil {
			probeCache.Store(key, res)
		}
		return res, nil
	})
	return v.(probeResult)
}

// stderrTail is the last few lines a failed interpreter wrote: where Python
// says why it could not start ("Fatal Python error: …").
func stderrTail(b []byte) []string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return lines
}

// openError says why a candidate could not be opened: "not found" only
// when it is not there. Another error (EMFILE when the process ran out of
// file descriptors, EACCES) is itself, or the user hunts for an interpreter
// that is installed.
func openError(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return errNotFound
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// envTooLarge says that env, this process's, is more than execve would
// start a program with, by the name of its largest variable (never its
// value): "argument list too long" named neither the cause nor the cure.
func envTooLarge(env []string) error {
	largest := ""
	for _, kv := range env {
		if len(kv) > len(largest) {
			largest = kv
		}
	}
	name, _, _ := strings.Cut(largest, "=")
	return &envTooLargeError{name, len(largest)}
}

type envTooLargeError struct {
	name string
	size int
}

func (e *envTooLargeError) Error() string {
	return fmt.Sprintf("cannot be started: this environment is too large to start a program with (its largest variable, %s, is %d bytes); "+
		"unset or shorten it (a large value is better passed in a file)", e.name, e.size)
}

func (e *envTooLargeError) Unwrap() error { return syscall.E2BIG }

// DefaultProbeTimeout bounds the first run of a candidate interpreter: a
// cold start, or a version manager's shim.
const DefaultProbeTimeout = 15 * time.Second

func runProbe(path, dir string, timeout time.Duration) probeResult {
	if _, err := os.Stat(path); err != nil {
		return probeResult{err: openError(err)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-c",
		"import sys;print(sys.executable);print('%d.%d.%d'%sys.version_info[:3])")
	// Its own session, killed whole: a shim's children must not outlive it
	// or hold its output open, and it must not read the user's terminal.
	cmd.SysProcAttr = probeAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Dir = dir
	out, err := cmd.Output()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
	}
	if ctx.Err() != nil {
		return probeResult{err: fmt.Errorf("did not answer within %s (is it a Python interpreter, or a shim that waits for input or a download?)", timeout)}
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(exit.Stderr) > 0 {
			return probeResult{err: &stderrError{err: err, tail: stderrTail(exit.Stderr)}}
		}
		if errors.Is(err, syscall.E2BIG) {
			return probeResult{err: envTooLarge(os.Environ())}
		}
		return probeResult{err: fmt.Errorf("does not run: %w", err)}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] == "" {
		return probeResult{err: fmt.Errorf("unexpected answer %q", out)}
	}
	if !strings.HasPrefix(lines[1], "3.") {
		return probeResult{err: fmt.Errorf("python %s is too old; evalhost needs python 3.8 or newer", lines[1])}
	}
	exe := lines[0]
	if venvBin(path) != "" {
		// Keep the venv's own path: resolving its symlink would leave the venv.
		exe = path
	}
	return probeResult{exe: exe, version: lines[1]}
}
