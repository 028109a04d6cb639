package serve

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/jsonscan"
	"github.com/evalhost/evalhost/sessions"
)

// request is one request line: its op, its id when it has one as a string
// ("" otherwise), and the parsed line.
type request struct {
	op, id string
	root   gjson.Result
}

// requestError is a malformed or refused request line; id and op are ""
// when the line had none that could be read.
type requestError struct {
	id, op, msg, line string
	inFlight          bool // id is taken by a request in flight
}

func (e *requestError) Error() string { return e.msg }

func (e *requestError) reply() RequestError {
	return RequestError{Error: e.msg, ID: e.id, InFlight: e.inFlight, Line: e.line, Op: e.op, Type: TypeRequestError}
}

// badRequest refuses root's request, naming its id and op.
func badRequest(root gjson.Result, format string, args ...any) *requestError {
	var op string
	if v := root.Get("op"); v.Type == gjson.String {
		op = v.Str
	}
	return &requestError{id: root.Get("id").String(), op: op, msg: fmt.Sprintf(format, args...)}
}

// parseRequest reads a line's op and id; a line without a string op is
// refused. The line is checked and its op and id read in one pass
// (jsonscan), as gjson.Valid would check it.
func parseRequest(line []byte) (request, *requestError) {
	text := string(line) // the request's strings are views of it
	var op, id gjson.Result
	isObject := jsonscan.Object(text, func(key string, v gjson.Result) {
		switch {
		case key == "op" && !op.Exists():
			op = v
		case key == "id" && !id.Exists():
			id = v
		}
	})
	if !isObject {
		if !gjson.Valid(text) {
			return request{}, &requestError{msg: "not valid JSON", line: quoteLine(line)}
		}
		return request{}, &requestError{msg: `a request must be a JSON object with an "op"`, line: quoteLine(line)}
	}
	root := gjson.Parse(text)
	if !op.Exists() {
		return request{}, badRequest(root, `missing "op"; one of %s`, opNames)
	}
	if op.Type != gjson.String {
		return request{}, badRequest(root, `"op" must be a string, not %s; one of %s`, op.Raw, opNames)
	}
	return request{op: op.Str, id: id.String(), root: root}, nil
}

// opNames lists the ops for error messages.
const opNames = "eval, cancel, reset, close, sessions, ping, shutdown, tool_result, job, jobs, wait, stop"

// quoteLine is the prefix of a bad line that an error quotes.
func quoteLine(line []byte) string {
	const limit = 200
	if len(line) > limit {
		return string(line[:limit])
	}
	return string(line)
}

// evalFields are an eval line's fields, and cellFields a cell's, found in
// one pass over the object: a Get per field scanned the line a dozen times,
// a tenth of serve's time on a warm round trip. Each is the first field of
// its name, as gjson's Get finds it.
type evalFields struct {
	id, session, cwd, mode, ipython, keepGoing, enterCwd, env, environ, terminal, argv, file, cells, onTimeout, maxRuntime gjson.Result
}

type cellFields struct {
	language, code, title, reset, timeout, onTimeout, maxRuntime, file, line, module, script gjson.Result
}

// read fills f from obj, an object of a request line parseRequest checked;
// the first of a repeated key counts. A direct call of slot, not one
// through a func value, keeps f (~1 KB) on the caller's stack.
func (f *evalFields) read(obj gjson.Result) {
	jsonscan.Object(obj.Raw, func(key string, v gjson.Result) {
		if dst := f.slot(key); dst != nil && !dst.Exists() {
			*dst = v
		}
	})
}

// read is evalFields.read for a cell: a copy, since a generic's method
// call goes through its dictionary, an indirect call again.
func (f *cellFields) read(obj gjson.Result) {
	jsonscan.Object(obj.Raw, func(key string, v gjson.Result) {
		if dst := f.slot(key); dst != nil && !dst.Exists() {
			*dst = v
		}
	})
}

func (f *evalFields) slot(key string) *gjson.Result {
	switch key {
	case "id":
		return &f.id
	case "session":
		return &f.session
	case "cwd":
		return &f.cwd
	case "mode":
		return &f.mode
	case "ipython":
		return &f.ipython
	case "keepGoing":
		return &f.keepGoing
	case "enterCwd":
		return &f.enterCwd
	case "env":
		return &f.env
	case "environ":
		return &f.environ
	case "terminal":
		return &f.terminal
	case "argv":
		return &f.argv
	case "file":
		return &f.file
	case "cells":
		return &f.cells
	case "onTimeout":
		return &f.onTimeout
	case "maxRuntime":
		return &f.maxRuntime
	}
	return nil
}

func (f *cellFields) slot(key string) *gjson.Result {
	switch key {
	case "language":
		return &f.language
	case "code":
		return &f.code
	case "title":
		return &f.title
	case "reset":
		return &f.reset
	case "timeout":
		return &f.timeout
	case "onTimeout":
		return &f.onTimeout
	case "maxRuntime":
		return &f.maxRuntime
	case "file":
		return &f.file
	case "line":
		return &f.line
	case "module":
		return &f.module
	case "script":
		return &f.script
	}
	return nil
}

// parseEval turns an eval line into a sessions request, checking every field
// so that a client learns exactly what was wrong.
func parseEval(root gjson.Result) (sessions.Request, *requestError) {
	var req sessions.Request
	var f evalFields
	f.read(root)
	if e := stringValue(root, "id", f.id, true, &req.ID); e != nil {
		return req, e
	}
	for _, sf := range []struct {
		name string
		v    gjson.Result
		dst  *string
	}{{"session", f.session, &req.Session}, {"cwd", f.cwd, &req.Cwd}, {"mode", f.mode, &req.Mode}} {
		if e := stringValue(root, sf.name, sf.v, false, sf.dst); e != nil {
			return req, e
		}
	}
	req.Cwd = pathValue(f.cwd, req.Cwd)
	if strings.ContainsRune(req.Session, 0) {
		// It goes into the interpreter's environment, where a NUL cannot.
		return req, badRequest(root, `"session" must not contain a NUL character`)
	}
	if e := parseOptions(root, f, &req); e != nil {
		return req, e
	}
	if e := parseTerminal(root, f.terminal, &req); e != nil {
		return req, e
	}
	if e := parseArgv(root, f, &req); e != nil {
		return req, e
	}
	cells, e := parseCells(root, f)
	req.Cells = cells
	return req, e
}

// parseOptions reads an eval's ipython, keepGoing, enterCwd, env and
// environ into req.
func parseOptions(root gjson.Result, f evalFields, req *sessions.Request) *requestError {
	if ip := f.ipython; ip.Exists() {
		if !ip.IsBool() {
			return badRequest(root, `"ipython" must be true or false`)
		}
		req.IPython = ip.Bool()
	}
	if kg := f.keepGoing; kg.Exists() {
		if !kg.IsBool() {
			return badRequest(root, `"keepGoing" must be true or false`)
		}
		req.KeepGoing = kg.Bool()
	}
	if ec := f.enterCwd; ec.Exists() {
		if !ec.IsBool() {
			return badRequest(root, `"enterCwd" must be true or false`)
		}
		req.EnterCwd = ec.Bool()
	}
	if env := f.env; env.Exists() {
		if !env.IsObject() {
			return badRequest(root, `"env" must be an object of strings`)
		}
		req.Env = map[string]string{}
		var bad string
		env.ForEach(func(k, v gjson.Result) bool {
			if v.Type != gjson.String {
				bad = k.Str
				return false
			}
			// Bytes that are not UTF-8 as in argv: run --session sends its
			// --env's as the interpreter's environment takes them.
			req.Env[pathValue(k, k.Str)] = pathValue(v, v.Str)
			return true
		})
		if bad != "" {
			return badRequest(root, `"env.%s" must be a string`, bad)
		}
	}
	return parseEnviron(root, f.environ, req)
}

// parseEnviron reads an eval's environ, the client's environment as
// NAME=VALUE strings (sessions.Request.Environ), bytes that are not UTF-8
// as in argv.
func parseEnviron(root, v gjson.Result, req *sessions.Request) *requestError {
	if !v.Exists() {
		return nil
	}
	const want = `"environ" must be an array of "NAME=VALUE" strings without NUL`
	if !v.IsArray() {
		return badRequest(root, want)
	}
	req.Environ = []string{}
	ok := true
	v.ForEach(func(_, e gjson.Result) bool {
		kv := pathValue(e, e.Str)
		ok = e.Type == gjson.String && strings.IndexByte(kv, '=') > 0 && !strings.ContainsRune(kv, 0)
		req.Environ = append(req.Environ, kv)
		return ok
	})
	if !ok {
		return badRequest(root, want)
	}
	return nil
}

// parseTerminal reads an eval's terminal: which of the cells' stdout and
// stderr the client shows on a terminal, and the variables its cells then
// have (sessions.Request.Terminal, which checks their names).
func parseTerminal(root, v gjson.Result, req *sessions.Request) *requestError {
	if !v.Exists() {
		return nil
	}
	const want = `"terminal" must be an object like {"stdout": true, "stderr": true, "env": {"COLUMNS": "80", "NO_COLOR": null}}`
	if !v.IsObject() {
		return badRequest(root, want)
	}
	t := &frames.Terminal{Fds: []int{}}
	for fd, name := range []string{"stdout", "stderr"} {
		switch shown := v.Get(name); {
		case !shown.Exists():
		case !shown.IsBool():
			return badRequest(root, `"terminal.%s" must be true or false`, name)
		case shown.Bool():
			t.Fds = append(t.Fds, fd+1)
		}
	}
	if env := v.Get("env"); env.Exists() {
		if !env.IsObject() {
			return badRequest(root, want)
		}
		t.Env = map[string]*string{}
		var bad string
		env.ForEach(func(k, v gjson.Result) bool {
			switch v.Type {
			case gjson.Null:
				t.Env[k.Str] = nil
			case gjson.String:
				s := pathValue(v, v.Str) // as env's
				t.Env[k.Str] = &s
			default:
				bad = k.Str
				return false
			}
			return true
		})
		if bad != "" {
			return badRequest(root, `"terminal.env.%s" must be a string or null`, bad)
		}
	}
	req.Terminal = t
	return nil
}

// parseCells reads an eval's cells, each taking the request's onTimeout
// and maxRuntime when it sets none.
func parseCells(root gjson.Result, f evalFields) ([]sessions.Cell, *requestError) {
	var cells []gjson.Result
	if f.cells.IsArray() {
		jsonscan.Array(f.cells.Raw, func(c gjson.Result) { cells = append(cells, c) })
	}
	if len(cells) == 0 {
		return nil, badRequest(root, `"cells" must be a non-empty array of {"language","code"} objects`)
	}
	var dflt sessions.Cell
	if e := parseDetach(root, f.onTimeout, f.maxRuntime, "", &dflt); e != nil {
		return nil, e
	}
	out := make([]sessions.Cell, 0, len(cells))
	for i, c := range cells {
		cell, e := parseCell(root, i, c)
		if e != nil {
			return nil, e
		}
		if cell.OnTimeout == "" {
			cell.OnTimeout = dflt.OnTimeout
		}
		if cell.MaxRuntime == 0 {
			cell.MaxRuntime = dflt.MaxRuntime
		}
		out = append(out, cell)
	}
	return out, nil
}

// parseDetach reads "onTimeout" and "maxRuntime" of a cell or a request
// (where is "" for the request, else "cells[i]."); package sessions checks
// their values.
func parseDetach(root, o, m gjson.Result, where string, cell *sessions.Cell) *requestError {
	if o.Exists() {
		if o.Type != gjson.String {
			return badRequest(root, `%sonTimeout must be "interrupt" or "detach"`, where)
		}
		cell.OnTimeout = o.Str
	}
	if m.Exists() {
		if m.Type != gjson.Number || m.Num <= 0 || m.Num > sessions.MaxMaxRuntime.Seconds() {
			return badRequest(root, "%smaxRuntime must be a positive number of seconds, at most %d (24 h)", where, int(sessions.MaxMaxRuntime.Seconds()))
		}
		cell.MaxRuntime = seconds(m.Num)
	}
	return nil
}

func parseCell(root gjson.Result, i int, c gjson.Result) (sessions.Cell, *requestError) {
	var cell sessions.Cell
	if !c.IsObject() {
		return cell, badRequest(root, "cells[%d] must be an object", i)
	}
	var f cellFields
	f.read(c)
	lang := f.language
	cell.Language = sessions.LangPython
	if lang.Exists() {
		l, ok := sessions.ParseLanguage(lang.Str)
		if lang.Type != gjson.String || !ok {
			return cell, badRequest(root, "cells[%d].language must be %s, in any case, not %s", i, sessions.LanguageChoices(), lang.Raw)
		}
		cell.Language = l
	}
	if m := f.module; m.Exists() {
		mod := pathValue(m, m.Str)
		if m.Type != gjson.String || mod == "" || strings.IndexByte(mod, 0) >= 0 || cell.Language != sessions.LangPython {
			return cell, badRequest(root, "cells[%d].module must be a module's name (no NUL) in a Python cell", i)
		}
		cell.Module = mod
	}
	if f.code.Type != gjson.String && !(cell.Module != "" && !f.code.Exists()) {
		return cell, badRequest(root, "cells[%d].code must be a string", i)
	}
	if cell.Module != "" && f.code.Str != "" {
		// The runner would run the module, a gateway kernel the code.
		return cell, badRequest(root, "cells[%d] has code and a module: a cell runs one (leave code out)", i)
	}
	cell.Code = f.code.Str
	if t := f.title; t.Exists() {
		if t.Type != gjson.String {
			return cell, badRequest(root, "cells[%d].title must be a string", i)
		}
		cell.Title = t.Str
	}
	for _, b := range []struct {
		name string
		v    gjson.Result
		dst  *bool
	}{{"reset", f.reset, &cell.Reset}, {"script", f.script, &cell.Script}} {
		if b.v.Exists() && !b.v.IsBool() {
			return cell, badRequest(root, "cells[%d].%s must be true or false", i, b.name)
		}
		*b.dst = b.v.Bool()
	}
	if t := f.timeout; t.Exists() {
		if t.Type != gjson.Number || t.Num <= 0 || math.IsInf(t.Num, 0) {
			return cell, badRequest(root, "cells[%d].timeout must be a positive number of seconds (clamped to 1..600)", i)
		}
		cell.Timeout = seconds(min(t.Num, 600))
	}
	if f.onTimeout.Exists() || f.maxRuntime.Exists() {
		if e := parseDetach(root, f.onTimeout, f.maxRuntime, fmt.Sprintf("cells[%d].", i), &cell); e != nil {
			return cell, e
		}
	}
	if f.file.Exists() || f.line.Exists() {
		if e := parseCellFile(root, i, f.file, f.line, &cell); e != nil {
			return cell, e
		}
	}
	return cell, nil
}

// parseCellFile reads a cell's "file" and "line": the file its code comes
// from and the line of its first line there (sessions.Cell's File, Line).
func parseCellFile(root gjson.Result, i int, file, line gjson.Result, cell *sessions.Cell) *requestError {
	path := pathValue(file, file.Str)
	if file.Type != gjson.String || path == "" || strings.IndexByte(path, 0) >= 0 {
		return badRequest(root, "cells[%d].file must be a non-empty path (no NUL), given with any cells[%d].line", i, i)
	}
	cell.File = path
	if line.Exists() {
		if line.Type != gjson.Number || line.Num < 1 || line.Num > math.MaxInt32 || line.Num != math.Trunc(line.Num) {
			return badRequest(root, "cells[%d].line must be a whole number from 1: the line of the cell's first line in its file", i)
		}
		cell.Line = int(line.Num)
	}
	return nil
}

// parseArgv reads argv (a non-empty array of strings) and file (a
// non-empty string, only with argv): the command line a script's cells see.
func parseArgv(root gjson.Result, f evalFields, req *sessions.Request) *requestError {
	if f.argv.Exists() {
		if !f.argv.IsArray() {
			return badRequest(root, `"argv" must be an array of strings`)
		}
		req.Argv = []string{}
		var bad *requestError
		f.argv.ForEach(func(_, v gjson.Result) bool {
			arg := pathValue(v, v.Str)
			switch {
			case v.Type != gjson.String:
				bad = badRequest(root, `"argv" must be an array of strings`)
			case strings.ContainsRune(arg, 0):
				bad = badRequest(root, `"argv" must not contain a NUL character: no command line can`)
			}
			req.Argv = append(req.Argv, arg)
			return bad == nil
		})
		if bad != nil {
			return bad
		}
		if len(req.Argv) == 0 {
			return badRequest(root, `"argv" must not be empty: its first element is the script ("-c" for code, "-" for stdin)`)
		}
	}
	if e := stringValue(root, "file", f.file, false, &req.File); e != nil {
		return e
	}
	req.File = pathValue(f.file, req.File)
	if f.file.Exists() && (req.File == "" || strings.IndexByte(req.File, 0) >= 0 || req.Argv == nil) {
		return badRequest(root, `"file" must be a non-empty path (no NUL), given with "argv"`)
	}
	return nil
}

// seconds converts a positive number of seconds to a Duration of at least
// 1ns: a value that rounds to 0 would read as "not given" and take the
// default (a wait with no timeout, a job's 1 h, a cell's 30 s) instead of
// the short bound the client asked for.
func seconds(s float64) time.Duration {
	return max(time.Duration(s*float64(time.Second)), time.Nanosecond)
}

// pathValue is a string field that names a path or a command-line
// argument: a lone surrogate \udc80 to \udcff in it is the byte of a name
// that is not UTF-8, as Python's os.fsdecode writes one and evalhost's own
// output does (frames.DecodeFSString); str is the field as read otherwise.
// Checks (no NUL) apply to what it returns: gjson's reading takes the
// escape after any lone surrogate as its pair ("\udcff\u0000" reads as
// U+FFFD), so it can lack a NUL the decoded path has.
func pathValue(v gjson.Result, str string) string {
	if v.Type != gjson.String || !strings.Contains(v.Raw, `\u`) {
		return str
	}
	if s, ok := frames.DecodeFSString(v.Raw); ok {
		return s
	}
	return str
}

// stringField reads an optional or required string field.
func stringField(root gjson.Result, name string, required bool, dst *string) *requestError {
	return stringValue(root, name, root.Get(name), required, dst)
}

// stringValue checks v, root's field name, as stringField does.
func stringValue(root gjson.Result, name string, v gjson.Result, required bool, dst *string) *requestError {
	switch {
	case !v.Exists() && required:
		return badRequest(root, "missing %q", name)
	case !v.Exists():
		return nil
	case v.Type != gjson.String:
		return badRequest(root, "%q must be a string", name)
	case required && v.Str == "":
		return badRequest(root, "%q must not be empty", name)
	}
	*dst = v.Str
	return nil
}

// ParseEval reads an eval request line as Serve does, every field checked;
// the error says what was wrong. The background session process behind
// `evalhost run --session` (package daemon) takes the same lines.
func ParseEval(line []byte) (sessions.Request, error) {
	req, e := parseRequest(line)
	if e != nil {
		return sessions.Request{}, e
	}
	r, perr := parseEval(req.root)
	if perr != nil {
		return r, perr
	}
	return r, nil
}
