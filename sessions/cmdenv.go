package sessions

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/trustdir"
)

// A request may carry the environment of the command it comes from
// (Request.Environ: run --session's). A session's interpreters outlive the
// command that started them, so without it they had the environment of
// whatever started the registry's process, and a command's PATH or
// PYTHONPATH did not count. With it:
//
//   - an interpreter the request starts takes it in Config.Environ's place;
//   - one already running gets the variables that python3 and a shell read
//     as they run (followedEnv: where programs are found, which venv is
//     active) set before the request's first cell of its language, as a
//     start would make them, when they differ from those it last got: so a
//     cell's own change to them lasts while the commands' do not change,
//     as the rest of a session's state does;
//   - a Python interpreter cannot take the variables python reads only as
//     it starts (startOnlyEnv: PYTHONPATH, which makes sys.path): a
//     request whose differ is told so on its first cell of Python, naming
//     both values and how to start afresh.

// followedEnv are set in a running interpreter of a language when the
// request's differ from what it last got.
var followedEnv = map[string][]string{
	LangPython: {"PATH", "VIRTUAL_ENV"},
	LangShell:  {"PATH", "VIRTUAL_ENV", "PYTHONPATH"}, // read by each python the shell starts
}

// startOnlyEnv are read by a language's interpreter as it starts only.
var startOnlyEnv = map[string][]string{
	LangPython: {"PYTHONPATH"},
}

// envPicks are the values of names in an environment; a name unset is
// absent.
type envPicks map[string]string

func pickEnv(env []string, lang string) envPicks {
	p := envPicks{}
	for _, name := range slices.Concat(followedEnv[lang], startOnlyEnv[lang]) {
		if v, ok := environValue(env, name); ok {
			p[name] = v
		}
	}
	return p
}

func environValue(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// same says whether name has one value (or is unset) in p and q.
func (p envPicks) same(q envPicks, name string) bool {
	a, okA := p[name]
	b, okB := q[name]
	return okA == okB && a == b
}

func (p envPicks) shown(name string) string {
	v, ok := p[name]
	if !ok {
		return "unset"
	}
	if v == "" {
		return "empty"
	}
	return trustdir.Shown(v)
}

// baseEnv is environ (else Config.Environ) filtered, with the session's
// venv first on PATH and Config.ExtraEnv: an interpreter's start
// environment before the variables of its own start (launchEnv).
func (s *session) baseEnv(environ []string) []string {
	cfg := &s.reg.cfg
	if environ == nil {
		environ = cfg.Environ
	}
	env := FilterEnv(environ)
	if s.python.BinDir != "" {
		env = prependPath(env, s.python.BinDir)
		env = setEnv(env, "VIRTUAL_ENV", filepath.Dir(s.python.BinDir))
	}
	for k, v := range cfg.ExtraEnv {
		env = setEnv(env, k, v)
	}
	return env
}

// requestEnv is a request's Env as a cell's.
func requestEnv(env map[string]string) map[string]*string {
	if len(env) == 0 {
		return nil
	}
	out := make(map[string]*string, len(env))
	for k, v := range env {
		out[k] = &v
	}
	return out
}

// setGotEnvLocked records what lang's interpreter has of the variables
// followed or read at start; s.mu is held.
func (s *session) setGotEnvLocked(lang string, p envPicks) {
	if s.gotEnv == nil {
		s.gotEnv = map[string]envPicks{}
	}
	s.gotEnv[lang] = p
}

// followEnv puts in req.Env (nil: unset) the followed variables of the
// request's environment whose values lang's interpreter did not get last;
// the returned func records them as got, once the cell took them. Names
// the request's Env sets are its to send (with its first cell of lang),
// and count as got.
func (c *cellRun) followEnv(req *frames.Request) (took func()) {
	lang, s := c.cell.Language, c.j.s
	if c.j.req.Environ == nil {
		return func() {}
	}
	want := pickEnv(s.baseEnv(c.j.req.Environ), lang)
	for name, v := range c.j.req.Env {
		want[name] = v
	}
	s.mu.Lock()
	got := s.gotEnv[lang]
	s.mu.Unlock()
	for _, name := range followedEnv[lang] {
		if _, own := c.j.req.Env[name]; own || got.same(want, name) {
			continue
		}
		if req.Env == nil {
			req.Env = map[string]*string{}
		}
		var v *string
		if w, ok := want[name]; ok {
			v = &w
		}
		req.Env[name] = v
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := envPicks{}
		maps.Copy(now, s.gotEnv[lang])
		for _, name := range followedEnv[lang] {
			if w, ok := want[name]; ok {
				now[name] = w
			} else {
				delete(now, name)
			}
		}
		s.setGotEnvLocked(lang, now)
	}
}

// tellStartOnlyEnv says, on the request's first cell of lang, which
// variables read only at start the request's environment gives other
// values than lang's interpreter started with.
func (c *cellRun) tellStartOnlyEnv() {
	lang, s := c.cell.Language, c.j.s
	if c.j.req.Environ == nil || len(startOnlyEnv[lang]) == 0 || c.j.envTold[lang] {
		return
	}
	if c.j.envTold == nil {
		c.j.envTold = map[string]bool{}
	}
	c.j.envTold[lang] = true
	want := pickEnv(s.baseEnv(c.j.req.Environ), lang)
	s.mu.Lock()
	got := s.gotEnv[lang]
	s.mu.Unlock()
	var diffs []string
	for _, name := range startOnlyEnv[lang] {
		if !got.same(want, name) {
			diffs = append(diffs, fmt.Sprintf("%s %s, and this command's is %s", name, got.shown(name), want.shown(name)))
		}
	}
	if len(diffs) == 0 {
		return
	}
	name := s.key.Session
	c.notice(fmt.Sprintf("[evalhost: session %s's %s interpreter started with %s: python reads it only as it starts (sys.path), so the cells run with what it read then; %q ends the session (its state is lost), and the next command starts one with this command's]\n",
		trustdir.Shown(name), lang, strings.Join(diffs, "; "), "evalhost kill "+shellWord(name)))
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellWord is s as one word a POSIX shell reads back as s.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
