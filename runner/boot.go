package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// BootEnv is the variable through which a host asks a runner it started
// from runner.py to write runner.py's bytecode for its interpreter
// (BootFor). A host drops one it inherited: only its own asks.
const BootEnv = "EVALHOST_BOOT"

// Boot is how a host starts the runner under one interpreter: the file it
// names after the interpreter's options, and what it adds to the runner's
// environment.
//
// Compiling runner.py is ~0.5 ms of every start that begins with it (the
// parser's first use in a fresh interpreter), so a host starts the runner
// from runner.py's bytecode once the runner has written it: a .pyc given
// to python as its script, whose header python checks for its own magic
// number only. Its name is the interpreter's (the inode, size and times
// of the file its path leads to: every venv of one python shares it, and
// two interpreters behind one path, in a home that hosts or containers
// share, each keep their own); the rest of its header is a key of the
// interpreter's and runner.py's inode, size, mtime and change time and
// runner.py's path, checked at each start. A new interpreter at a path, or
// a runner.py put back (Path renames), misses it, and the start from
// runner.py writes it anew.
type Boot struct {
	File     string   // what the interpreter runs: runner.py, or Bytecode
	Env      []string // nil, or BootEnv's ask: the runner is to write Bytecode
	Bytecode string   // runner.py's bytecode for this interpreter; "" when it has none
	source   string   // runner.py
	ask      string   // BootEnv's value
}

// FromBytecode reports whether b starts the runner from its bytecode.
func (b Boot) FromBytecode() bool { return b.Bytecode != "" && b.File == b.Bytecode }

// Refused removes b's bytecode, which the interpreter refused to run (its
// magic number is another's: a shared libpython of another version put in
// place under the same binary), and returns the boot from runner.py, which
// writes it anew. A removal that fails is left to that write's rename.
func (b Boot) Refused() Boot {
	if b.Bytecode != "" {
		_ = os.Remove(b.Bytecode)
	}
	return Boot{File: b.source, Env: b.askEnv(), Bytecode: b.Bytecode, source: b.source, ask: b.ask}
}

func (b Boot) askEnv() []string {
	if b.ask == "" {
		return nil
	}
	return []string{BootEnv + "=" + b.ask}
}

// BootFor returns how to start runnerPy (the path Path returned) under the
// interpreter python. Both must be absolute paths: with either relative,
// or a file that cannot be stat'd, the runner starts from runnerPy, as it
// does where no bytecode holds; then Env asks the runner to write it. The
// bytecode is used only when it is a regular file of this user's that no
// one else may write, in runner.py's own __pycache__ (Path keeps that this
// user's alone), with the key of this interpreter and runner.py.
func BootFor(runnerPy, python string) Boot {
	b := Boot{File: runnerPy, source: runnerPy}
	if !filepath.IsAbs(runnerPy) || !filepath.IsAbs(python) {
		return b
	}
	pyFacts, ok := statFacts(python)
	runnerFacts, ok2 := statFacts(runnerPy)
	if !ok || !ok2 {
		return b
	}
	facts := pyFacts + " " + runnerFacts // what the runner checks before it writes (bytecode.py)
	sum := sha256.Sum256([]byte("evalhost runner bytecode 1\n" + runnerPy + "\n" + facts))
	key := sum[:12] // the header's 12 bytes after the magic number
	b.Bytecode = filepath.Join(filepath.Dir(runnerPy), "__pycache__", bytecodeName(pyFacts))
	b.ask = hex.EncodeToString(key) + " " + filepath.Base(b.Bytecode) + " " + facts // Refused's too
	if bytecodeHolds(b.Bytecode, key) {
		b.File = b.Bytecode
		return b
	}
	b.Env = b.askEnv()
	return b
}

// bytecodeName is the name of runner.py's bytecode in its __pycache__ for
// the interpreter whose inode, size and times are facts (statFacts): one
// file an interpreter, whatever paths lead to it. A file replaced at a path
// (an upgrade) leaves the old one's, as an evalhost upgrade leaves its
// runner dir.
func bytecodeName(facts string) string {
	sum := sha256.Sum256([]byte("evalhost interpreter 1\n" + facts))
	return "runner." + hex.EncodeToString(sum[:8]) + ".pyc"
}
