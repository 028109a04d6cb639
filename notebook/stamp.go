package notebook

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// Stamp identifies the content of a notebook file as it was read: whether
// it existed, its size and its SHA-256. Two Stamps are equal (==) when the
// file held the same bytes. The zero Stamp is "the file did not exist".
//
// It is the content and not the modification time or inode: two writes
// within a file system's time granularity share an mtime, and every atomic
// save makes a new inode even when it wrote the same bytes.
type Stamp struct {
	exists bool
	size   int64
	sum    [sha256.Size]byte
}

// StampOf returns the Stamp of a file holding data.
func StampOf(data []byte) Stamp {
	return Stamp{exists: true, size: int64(len(data)), sum: sha256.Sum256(data)}
}

// Exists reports whether the stamped file existed.
func (s Stamp) Exists() bool { return s.exists }

// readStamp stamps the file at path as it is now; a missing file is the
// zero Stamp.
func readStamp(path string) (Stamp, error) {
	f, err := OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Stamp{}, nil
	}
	if err != nil {
		return Stamp{}, err
	}
	defer f.Close()
	sum := sha256.New() // streamed: the file may have grown to any size
	n, err := io.Copy(sum, f)
	if err != nil {
		return Stamp{}, err
	}
	return Stamp{exists: true, size: n, sum: [sha256.Size]byte(sum.Sum(nil))}, nil
}

// held is what a file is expected to hold: the bytes themselves when they
// are at hand (what a notebook last saved, which its cell cache keeps
// anyway), else the Stamp of what was read. Comparing bytes costs no hash:
// nb run saves after every cell, and hashing the file twice per save was a
// quarter of a save's cost. The zero held is "the file does not exist".
type held struct {
	data     []byte
	haveData bool  // data is the content (it may be empty)
	stamp    Stamp // the content's Stamp, when not haveData
	// file is the file that held it, as read or written (nil: unknown),
	// for a conflict to tell another file renamed over the name from a
	// write in place: the content alone is checked, not the inode, which
	// every save changes.
	file fs.FileInfo
}

func heldBytes(data []byte) held { return held{data: data, haveData: true} }

// none says whether h is "the file does not exist".
func (h *held) none() bool { return !h.haveData && !h.stamp.exists }

// Stamp returns the Stamp of the held content.
func (h *held) Stamp() Stamp {
	if h.haveData {
		return StampOf(h.data)
	}
	return h.stamp
}

// in reports whether the file at path holds h, reading it in chunks.
func (h *held) in(path string) (bool, error) {
	if !h.haveData {
		found, err := readStamp(path)
		return err == nil && found == h.stamp, err
	}
	f, err := OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	size := 0
	for {
		n, err := f.Read(buf)
		if size+n > len(h.data) || !bytes.Equal(buf[:n], h.data[size:size+n]) {
			return false, nil
		}
		size += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
	}
	return size == len(h.data), nil
}

// ConflictError is a write refused because the file is no longer the one
// that was read: another edit or program wrote (or created, or removed) it
// in between. Nothing was written. It matches ErrConflict.
type ConflictError struct {
	Path     string
	Expected Stamp // what was read
	Found    Stamp // what is there now
	// There is what holds the name a new file was to take (Expected is
	// the zero Stamp), when "created by someone else" does not say it:
	// a dangling symlink reads as missing, another user's file is not the
	// user's to remove. Nil otherwise.
	There *Occupant
	// Replaced: the name now leads to another file than the one read or
	// written (renamed over it, or a link repointed), not the same file
	// written in place.
	Replaced bool
}

func (e *ConflictError) Error() string {
	var what string
	switch {
	case !e.Expected.exists && e.There != nil:
		remedy := "save under another name"
		if r := e.There.Remedy(); r != "" {
			remedy = r + ", or " + remedy
		}
		return fmt.Sprintf("%s %s, made after evalhost found the name free; nothing was written: %s", trustdir.Shown(e.Path), e.There.What(), remedy)
	case !e.Expected.exists:
		what = "was created by someone else after evalhost found it missing"
	case !e.Found.exists:
		what = "was removed after it was read"
	case e.Replaced:
		what = "was replaced by another file after it was read (one renamed over it, as an editor's save, mv or git checkout does, or a symlink on its way repointed)"
	default:
		what = "changed on disk after it was read (another edit or program wrote it)"
	}
	return fmt.Sprintf("%s %s; nothing was written, so that change is kept: read the notebook again and redo this edit", trustdir.Shown(e.Path), what)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// absolute is path made absolute, links left as they are: the name a
// caller gave, to tell when it comes to lead to another file.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// canonical names the file a path refers to, so that two spellings of one
// notebook (relative, through a symlink) compare equal: the file a save
// writes (resolveLinks), or, for a link resolveLinks refuses, the link.
func canonical(path string) string {
	if target, err := resolveLinks(path); err == nil {
		return target
	}
	return absolute(path)
}
