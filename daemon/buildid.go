package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
)

// BuildIdentity is version and the build of the running executable: a
// client whose identity differs from the process's hello replaces it. The
// build is the Go build ID the linker wrote into the binary (the hash of
// its content, as `go tool buildid` reads it), so two copies of one build
// at different paths are one identity and share a process, while a
// rebuilt binary that keeps its version string is another. A binary
// without a readable build ID (built with -buildid=, or one whose head
// cannot be read) is version alone.
func BuildIdentity(version string) string {
	exe, err := os.Executable()
	if err != nil {
		return version
	}
	f, err := os.Open(exe)
	if err != nil {
		return version
	}
	defer f.Close()
	head := make([]byte, buildIDHead)
	n, _ := io.ReadFull(f, head)
	if id := goBuildID(head[:n]); id != "" {
		sum := sha256.Sum256([]byte(id))
		return version + "+" + hex.EncodeToString(sum[:6]) // as short as the hello's other fields
	}
	return version
}

// buildIDHead is how much of the executable's start is searched, as the
// go command's own reader does: the linker puts the ID near the start.
const buildIDHead = 32 << 10

// goBuildID finds the Go build ID in the start of an executable: an ELF
// note of name "Go" and type 4, or (Mach-O and the rest) the text the
// linker writes at the start of the text segment, `\xff Go build ID:
// "ID"\n \xff`. "" when there is none.
func goBuildID(head []byte) string {
	if id := elfBuildID(head); id != "" {
		return id
	}
	const prefix, suffix = "\xff Go build ID: \"", "\"\n \xff"
	i := bytes.Index(head, []byte(prefix))
	if i < 0 {
		return ""
	}
	rest := head[i+len(prefix):]
	j := bytes.Index(rest, []byte(suffix))
	if j <= 0 {
		return ""
	}
	return printable(rest[:j])
}

// elfBuildID reads the note .note.go.buildid: namesz 4, descsz, type 4,
// "Go\x00\x00", then descsz bytes of ID, in either byte order.
func elfBuildID(head []byte) string {
	name := []byte("Go\x00\x00")
	for off := 0; ; {
		i := bytes.Index(head[off:], name)
		if i < 0 {
			return ""
		}
		at := off + i
		off = at + 1
		if at < 12 {
			continue
		}
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			h := head[at-12 : at]
			size := int(bo.Uint32(h[4:]))
			if bo.Uint32(h) != 4 || bo.Uint32(h[8:]) != 4 || size <= 0 || at+4+size > len(head) {
				continue
			}
			if id := printable(head[at+4 : at+4+size]); id != "" {
				return id
			}
		}
	}
}

// printable is b as a string when it is an ID's text (printable ASCII),
// else "".
func printable(b []byte) string {
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return ""
		}
	}
	return string(b)
}
