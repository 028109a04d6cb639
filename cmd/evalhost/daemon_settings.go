package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/streamsink"
)

// daemonSetting is one thing the background process fixes as it starts
// from its environment (or its flags), which a later command's
// environment cannot change: that command's cells run with the process's.
type daemonSetting struct {
	key    string // its name in the hello's settings: the variable that sets it
	label  string // how a notice names it, when not by key
	secret bool   // its value is a digest, and a notice says only that it differs
	minor  bool   // the process's lifetime alone, not where or how cells run
}

// daemonSettingList is every daemonSetting, in the order a notice names them.
var daemonSettingList = []daemonSetting{
	{key: "PI_ARTIFACTS_DIR"},
	{key: streamsink.MaxTotalEnv},
	{key: "EVALHOST_BACKEND", label: "the Python backend (EVALHOST_BACKEND, or PI_PYTHON_GATEWAY_URL set)"},
	{key: "PI_PYTHON_GATEWAY_URL"},
	{key: "PI_PYTHON_GATEWAY_TOKEN", secret: true},
	{key: "PI_PY"},
	{key: "EVALHOST_DAEMON_IDLE", minor: true},
	{key: "EVALHOST_DAEMON_MAX_SESSIONS", minor: true},
}

// daemonSettings are the settings a background process with these takes
// as it starts, by key, as its hello reports them: values in effect (an
// idle time unset is the default's), so only a difference in what the
// process does counts. One that does not apply is left out (the cap of
// a PI_ARTIFACTS_DIR, which is never pruned; the gateway's address and
// token for the runner backend), and so is one that cannot be read (the
// command refuses it elsewhere). The gateway token is a digest: the
// hello carries no secret.
func daemonSettings(store *streamsink.Store, b config.Backend, idle time.Duration, maxSessions int) map[string]string {
	s := map[string]string{
		"EVALHOST_DAEMON_IDLE":         idle.String(),
		"EVALHOST_DAEMON_MAX_SESSIONS": strconv.Itoa(maxSessions),
	}
	if max, own := store.MaxTotal(); own {
		s["PI_ARTIFACTS_DIR"] = "unset (" + store.Dir() + ")"
		s[streamsink.MaxTotalEnv] = "no cap"
		if max >= 0 {
			s[streamsink.MaxTotalEnv] = streamsink.HumanBytes(max)
		}
	} else {
		s["PI_ARTIFACTS_DIR"] = store.Dir()
	}
	if langs, err := config.Languages(); err == nil {
		s["PI_PY"] = strings.Join(langs, " and ") + " cells"
	}
	if name, err := b.Resolved(); err == nil {
		s["EVALHOST_BACKEND"] = name
		if name == config.BackendGateway {
			s["PI_PYTHON_GATEWAY_URL"] = orUnset(os.Getenv("PI_PYTHON_GATEWAY_URL"))
			s["PI_PYTHON_GATEWAY_TOKEN"] = secretDigest(os.Getenv("PI_PYTHON_GATEWAY_TOKEN"))
		}
	}
	return s
}

// commandDaemonSettings are daemonSettings as this command's environment
// and its --backend (b) give them: what a process it started would
// report (daemonCommand passes the flag on).
func commandDaemonSettings(home string, b config.Backend) map[string]string {
	store, err := config.ArtifactStore(home)
	if err != nil {
		return nil // refused by checkDaemonEnv before any connection
	}
	idle, _ := daemonIdle()
	n, _ := daemonMaxSessions()
	return daemonSettings(store, b, idle, n)
}

// backendRefused is a --backend the background process does not run: it
// runs one backend for every session, fixed as it started.
type backendRefused struct {
	asked, theirs string
	pid           int
}

func (e *backendRefused) Error() string {
	return fmt.Sprintf(`--backend %s: the background process (pid %d) runs Python cells in the %s backend, for every session it holds, as it started; to use %s, run "evalhost daemon stop" (the state of every session it holds is lost) and run again, or leave --backend out to run in its %s`,
		e.asked, e.pid, e.theirs, e.asked, e.theirs)
}

// acceptBackend refuses a process whose backend is not the one --backend
// asked for (none given: any, told by showSettings when it differs from
// the environment's). A flag given wins over the environment, as
// elsewhere: the process a command starts gets it (daemonCommand), and
// one running another cannot give it. A process that reports no backend
// predates the settings and is replaced for its version anyway.
func acceptBackend(asked string) func(*daemon.Client) error {
	if asked == "" {
		return nil
	}
	return func(c *daemon.Client) error {
		if theirs, ok := c.Settings["EVALHOST_BACKEND"]; ok && theirs != asked {
			return &backendRefused{asked: asked, theirs: theirs, pid: c.Hello.PID}
		}
		return nil
	}
}

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}

// secretDigest stands for a secret's value in a hello: equal values give
// equal digests, and the value is not shown.
func secretDigest(v string) string {
	if v == "" {
		return "unset"
	}
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// showSettings says, once, how the settings of c's process differ from
// mine (this command's), in evalhost's notice style; nothing when they
// do not, or when the process reports none (one that predates them).
func showSettings(c *daemon.Client, mine map[string]string, stderr io.Writer) {
	if n := settingsNotice(c.Hello.PID, c.Settings, mine); n != "" {
		fmt.Fprintf(stderr, "[evalhost: %s]\n", n)
	}
}

// settingsNotice is showSettings's notice, "" when none is due. Only the
// settings both sides report are compared. A difference in where or how
// cells run says that this command's cells run with the process's, and
// that stopping it (every session's state with it) lets the next command
// start one with this command's; one in the process's lifetime alone
// (its idle time, its sessions' cap) says only when this command's apply.
func settingsNotice(pid int, theirs, mine map[string]string) string {
	var diffs []string
	major := false
	for _, s := range daemonSettingList {
		t, ok1 := theirs[s.key]
		m, ok2 := mine[s.key]
		if !ok1 || !ok2 || t == m {
			continue
		}
		major = major || !s.minor
		diffs = append(diffs, s.differs(t, m))
	}
	if len(diffs) == 0 {
		return ""
	}
	if !major {
		return fmt.Sprintf(`the background process (pid %d) keeps the limits it started with: %s; this command's take effect only in one started anew ("evalhost daemon stop", which loses the state of every session it holds, then run again)`,
			pid, strings.Join(diffs, "; "))
	}
	return fmt.Sprintf(`the background process (pid %d) keeps the settings it started with, not this command's: %s. This command's cells run with its settings; to use this command's, run "evalhost daemon stop" (the state of every session it holds is lost) and run again`,
		pid, strings.Join(diffs, "; "))
}

// differs says how s's value there (the process's) and here differ; a
// secret's only whether it is set.
func (s daemonSetting) differs(there, here string) string {
	name := s.label
	if name == "" {
		name = s.key
	}
	if s.secret && there != "unset" && here != "unset" {
		return name + " differs (its value is not shown)"
	}
	if s.secret {
		there, here = setOrUnset(there), setOrUnset(here)
	}
	return fmt.Sprintf("%s is %s there, %s here", name, trustdir.Shown(there), trustdir.Shown(here))
}

func setOrUnset(v string) string {
	if v == "unset" {
		return v
	}
	return "set"
}
