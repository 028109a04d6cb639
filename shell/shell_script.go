package shell

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/evalhost/evalhost/frames"
)

// ErrEnvName: a request's env has a name bash cannot export.
var ErrEnvName = errors.New("invalid environment variable name")

// shellInitLine is typed into the fresh interactive bash, as one line, before
// anything else. It silences prompts, history and job control (so no "[1]
// 1234" notices and background jobs stay in bash's process group, which Kill
// reaches), defines the markers and prints the ready marker.
//
// __evh_end prints the end marker of the cell whose number is in __evh_n,
// with the last exit status, and clears __evh_n, so a second call prints
// none. Each cell's line calls it after `source`. PROMPT_COMMAND
// (__evh_prompt) does the same, because an interrupt aborts the rest of
// the line and the prompt is the only thing that runs next; and at a
// prompt that no line accounts for (__evh_p is set by a line that ended, or
// was guarded out) it prints the prompt marker P instead: bash came back
// to its prompt without running a line, because a SIGINT reached it there
// or took the line it was reading (shellCell.prompt).
//
// Markers go to /dev/tty, so a cell that redirects the shell's stdout
// (exec >file) still ends. __evh_mark formats a marker whole before it
// prints it in one piece: printf's own formatting, cut by a SIGINT, left
// a part of one for bash's newline to flush. exit is wrapped only to hide
// the "exit" that interactive bash writes to stderr; the status is the
// builtin's.
func shellInitLine(nonce string) string {
	return strings.Join([]string{
		"set +m +o history",
		"unset HISTFILE MAIL MAILPATH MAILCHECK PROMPT_COMMAND",
		"PS1= PS2= PS0= PS4='+ '",
		"__evh_l= __evh_p=1",
		"__evh_mark() { builtin printf -v __evh_m '\\036EVH%s:%s\\036\\n' " + nonce + " \"$1\"; builtin printf %s \"$__evh_m\" >/dev/tty; }",
		"__evh_end() { local s=$?; if [[ -n ${__evh_n-} ]]; then __evh_mark \"$__evh_n:$s\"; __evh_n= __evh_p=1; fi; }",
		"__evh_prompt() { local s=$?; if [[ -n ${__evh_n-} ]]; then __evh_mark \"$__evh_n:$s\"; __evh_n=; elif [[ -z ${__evh_p-} ]]; then __evh_mark P; fi; __evh_p=; }",
		"PROMPT_COMMAND=__evh_prompt",
		"exit() { builtin exit \"$@\" 2>/dev/null; }",
		"__evh_mark \"R:$BASH_VERSION\"",
	}, "; ") + "\n"
}

// shellCellLine is the one line typed for cell n: apply the request's cwd
// and env, source the cell file with stdin from /dev/null, print the end
// marker. sync prints the start marker S:n first, for a cell that follows
// an interrupt that may have reached bash at its prompt (Shell.stray).
//
// A SIGINT that reaches bash while it reads a line can take the whole
// line, its first character, or any first part of it, and bash then runs
// what is left. So the line holds no quote, which cut in two would leave
// bash waiting for its other half: what needs quoting (a cwd, env values,
// the host's paths where TMPDIR holds such characters) goes to pre, the
// text of a script the line sources from preFile, which the caller
// writes; pre is "" when nothing does. What is left of a cut line is a
// harmless assignment to PROMPT_COMMAND (which is set already), a syntax
// error (then, else or fi without their if) or a word that is no command.
// A line that did not get past its guard comes back to the prompt with P,
// and is typed again (shellCell.prompt).
//
// The line is guarded by the cell number (__evh_l), so a copy runs nothing
// once the line ran: the host cannot tell whether the SIGINT behind a P
// took the line or came before bash read it. A guarded-out copy accounts
// for its prompt (__evh_p) as a line that ran does. The assignment after
// the start marker leaves $_ empty for the cell, as an assignment does.
func shellCellLine(n int, cellFile, preFile string, req frames.Request, sync bool) (line, pre string, err error) {
	num := strconv.Itoa(n)
	var apply strings.Builder
	quoted := false
	word := func(s string) string {
		w := shellWord(s)
		quoted = quoted || w != s
		return w
	}
	if req.Cwd != "" {
		apply.WriteString("builtin cd -- " + word(req.Cwd) + " && ")
	}
	names := make([]string, 0, len(req.Env))
	for name := range req.Env {
		if !shellValidName(name) {
			return "", "", fmt.Errorf("%w %q: use letters, digits and underscores, not starting with a digit", ErrEnvName, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v := req.Env[name]; v != nil {
			apply.WriteString("builtin export " + name + "=" + word(*v) + " && ")
		} else {
			apply.WriteString("builtin unset -v " + name + " && ")
		}
	}
	cell := word(cellFile)
	if quoted {
		pre = apply.String() + "builtin source " + shellQuote(cellFile) + " </dev/null\n"
		apply.Reset()
		cell = ""
		if shellWord(preFile) != preFile {
			return "", "", fmt.Errorf("%w: the cell directory %q needs quoting; set TMPDIR to a plain path", ErrCellDir, filepath.Dir(preFile))
		}
	}
	var b strings.Builder
	b.WriteString("PROMPT_COMMAND=__evh_prompt; if [[ ${__evh_l-} == " + num + " ]]; then __evh_p=1; else ")
	b.WriteString("__evh_l=" + num + " __evh_n=" + num + "; ")
	if sync {
		b.WriteString("__evh_mark S:" + num + "; __evh_n=" + num + "; ")
	}
	b.WriteString(apply.String())
	if cell != "" {
		b.WriteString("builtin source " + cell + " </dev/null; ")
	} else {
		b.WriteString("builtin source " + preFile + "; ")
	}
	b.WriteString("__evh_end; fi\n")
	return b.String(), pre, nil
}

// shellSkipLine is typed instead of a copy of cell n's line when the cell
// was interrupted (shellCell.prompt): it runs nothing, and marks the cell
// skipped (X:n) unless its line ran. It holds no quote either.
func shellSkipLine(n int) string {
	num := strconv.Itoa(n)
	return "PROMPT_COMMAND=__evh_prompt; if [[ ${__evh_l-} == " + num + " ]]; then __evh_p=1; else __evh_l=" + num +
		" __evh_p=1; __evh_mark X:" + num + "; fi\n"
}

// ErrCellDir: the directory the cells go through has a path the typed line
// cannot hold unquoted (shellCellLine).
var ErrCellDir = errors.New("cell directory path needs quoting")

// shellWord is s as one bash word: as it is when every byte is one bash
// takes literally in a word, else quoted (shellQuote).
func shellWord(s string) string {
	if s == "" {
		return "''"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._-+,@%:", c) >= 0) {
			return shellQuote(s)
		}
	}
	return s
}

func shellValidName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// shellQuote quotes s as one bash word that stays on one line: '...' when s
// has no control characters, else $'...' with escapes, because a raw newline
// would split the typed command line.
func shellQuote(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
