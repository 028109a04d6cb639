package shell

import (
	"errors"
	"fmt"
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
// reaches), defines the end-of-cell marker and prints the ready marker.
//
// __evh_end prints the marker for the cell whose number is in __evh_n with
// the last exit status, and empties the prompts a cell may have set (a
// venv's activate sets PS1), which bash would print into the next cell's
// output: PS1 after this, PS0 before the next line runs. Each cell's line
// calls it after `source` (with an argument); it is also in
// PROMPT_COMMAND, because an interrupt aborts the rest of the line and the
// prompt is the only thing that runs next. It clears __evh_n, so the second
// call, and an interrupt that lands between cells, print nothing.
//
// A PROMPT_COMMAND of the user's (direnv's hook, a cell's own) runs after
// each cell, before its marker, as a terminal runs it after each command
// line: its output is the cell's, the cell's status is kept, and the hook
// sees it in $?. __evh_keep takes what a cell left in PROMPT_COMMAND, less
// our own entry, into __evh_pc; each line then sets PROMPT_COMMAND to that
// followed by ours (__evh_pcset), so a cell sees the user's value and one
// that adds to it keeps ours, and between cells it is ours alone, so the
// prompt does not run the user's again. After an interrupt the prompt has
// just run the user's part itself, so __evh_end without its argument does
// not run it again. PROMPT_COMMAND as an array (bash 5.1) is joined.
//
// Markers go to /dev/tty, so a cell that redirects the shell's stdout
// (exec >file) still ends. exit is wrapped only to hide the "exit" that interactive bash writes to
// stderr; the status is the builtin's.
func shellInitLine(nonce string) string {
	return strings.Join([]string{
		"set +m +o history",
		"unset HISTFILE MAIL MAILPATH MAILCHECK PROMPT_COMMAND",
		"PS1= PS2= PS0= PS4='+ '",
		"__evh_end() { local s=$?; PS1= PS0=; if [[ -n ${__evh_n-} ]]; then [[ ${PROMPT_COMMAND[*]-} == __evh_end ]] || __evh_keep; " +
			"if [[ -n ${1-} && -n $__evh_pc ]]; then __evh_rc $s; eval \"$__evh_pc\"; fi; " +
			"builtin printf '\\036EVH%s:%s:%s\\036\\n' " + nonce + " \"$__evh_n\" \"$s\" >/dev/tty; __evh_n=; fi; }",
		"__evh_keep() { local IFS=';' v; v=\"${PROMPT_COMMAND[*]-}\"; if [[ $v != \"$__evh_pcset\" && $v != __evh_end ]]; then " +
			"v=${v//;__evh_end/}; v=${v//__evh_end;/}; [[ $v == __evh_end ]] && v=; __evh_pc=$v; __evh_pcset=${v:+$v;}__evh_end; fi; " +
			"builtin unset PROMPT_COMMAND; PROMPT_COMMAND=__evh_end; }",
		"__evh_rc() { return $1; }",
		"__evh_pc= __evh_pcset=__evh_end PROMPT_COMMAND=__evh_end",
		"__evh_argv0=$0",
		"exit() { builtin exit \"$@\" 2>/dev/null; }",
		"builtin printf '\\036EVH%s:R:%s\\036\\n' " + nonce + " \"$BASH_VERSION\"",
	}, "; ") + "\n"
}

// shellSyncLine prints cell n's sync marker, early in its line after an
// interrupt that may have reached bash at its prompt (Shell.strays): what
// that interrupt printed comes before it.
func shellSyncLine(nonce string, n int) string {
	return "builtin printf '\\036EVH%s:S:%s\\036\\n' " + nonce + " " + strconv.Itoa(n) + " >/dev/tty; "
}

// shellCellLine is the one line typed for cell n: apply the request's cwd,
// source setupFile (when not "": shellSetupScript's env and arguments) and
// then the cell file with stdin from /dev/null, print the marker.
// sync (a shellSyncLine, or "") goes after the first statement: an
// interrupt that lands while bash reads the line costs its first character,
// harmless in PROMPT_COMMAND's assignment (already set), where in the sync's
// it would cost the marker; and before the marker number's assignment,
// which leaves $_ empty for the cell, as without a sync.
func shellCellLine(n int, file, setupFile string, req frames.Request, sync string) string {
	var b strings.Builder
	b.WriteString("PROMPT_COMMAND=$__evh_pcset; ")
	b.WriteString(sync)
	b.WriteString("__evh_n=")
	b.WriteString(strconv.Itoa(n))
	b.WriteString("; ")
	if req.Cwd != "" {
		// Typed, so a missing one says "bash: cd: ...", not a file of ours.
		b.WriteString("builtin cd -- ")
		b.WriteString(shellQuote(req.Cwd))
		b.WriteString(" && ")
	}
	if setupFile != "" {
		b.WriteString("builtin source ")
		b.WriteString(shellQuote(setupFile))
		b.WriteString(" && ")
	}
	b.WriteString("builtin source ")
	b.WriteString(shellQuote(file))
	b.WriteString(" </dev/null; __evh_end x\n")
	return b.String()
}

// shellSetupScript exports (or unsets) the request's env and sets the
// shell's $0 (a script's name when File is set) and positional parameters
// to its Argv after the first, as a script's $1... are; "" when there is
// neither. It is sourced from a file, not typed: a terminal cuts a line at 4096 bytes, which a value or a list of
// arguments (a few hundred file names) passes. The arguments are set in
// the shell itself, not given as source's, which bash takes back when the
// cell ends: a cell's shift lasts into the next cell, as in a script, and
// a later Argv without arguments does not see an earlier cell's set --.
func shellSetupScript(req frames.Request) (string, error) {
	names := make([]string, 0, len(req.Env))
	for name := range req.Env {
		if !shellValidName(name) {
			return "", fmt.Errorf("%w %q: use letters, digits and underscores, not starting with a digit", ErrEnvName, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		if v := req.Env[name]; v != nil {
			b.WriteString("builtin export " + name + "=" + shellQuote(*v) + " && ")
		} else {
			b.WriteString("builtin unset -v " + name + " && ")
		}
	}
	if req.Argv != nil {
		// $0 is a script's name, as bash FILE sets it (the cd "$(dirname
		// "$0")" idiom); bash's own again for -c and stdin. BASH_ARGV0 sets
		// it from bash 5.0; an older bash takes it as a plain variable.
		if req.File != "" && len(req.Argv) > 0 && req.Argv[0] != "-" {
			b.WriteString("BASH_ARGV0=" + shellQuote(req.Argv[0]) + " && ")
		} else {
			b.WriteString(`BASH_ARGV0="$__evh_argv0" && `)
		}
		b.WriteString("builtin set --")
		for _, arg := range req.Argv[min(1, len(req.Argv)):] {
			b.WriteString(" ")
			b.WriteString(shellQuote(arg))
		}
		b.WriteString(" && ")
	}
	if b.Len() == 0 {
		return "", nil
	}
	return strings.TrimSuffix(b.String(), " && ") + "\n", nil
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
