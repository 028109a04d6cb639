package notebook

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// Occupant is what holds a name a new notebook was to take, for a refusal
// to say more than "exists" where that word misleads: a dangling symlink
// (ls shows it, cat says no such file), another user's file (not the
// user's to remove), what is no file at all.
type Occupant struct {
	Link     string      // the symlink the name is, as it reads ("" when it is none)
	Dangling bool        // that link leads to no file: nothing at its end, or a loop
	Mode     fs.FileMode // the type of what is there, through a link (0: a regular file)
	Owner    string      // another user, who owns it (the link, when dangling): "bob (uid 1001)"; "" for this user
	loop     bool        // the dangling link is a loop
}

// OccupantOf says what holds path; ok is false when nothing is there.
func OccupantOf(path string) (o Occupant, ok bool) {
	lst, err := os.Lstat(path)
	if err != nil {
		return Occupant{}, false
	}
	st := lst
	if lst.Mode()&fs.ModeSymlink != 0 {
		o.Link, _ = os.Readlink(path)
		if st, err = os.Stat(path); err != nil {
			o.Dangling, o.loop, st = true, errors.Is(err, syscall.ELOOP), lst
		}
	}
	if !o.Dangling {
		o.Mode = st.Mode().Type()
	}
	if uid, ok := fileOwner(st); ok && uid != os.Geteuid() {
		o.Owner = "uid " + strconv.Itoa(uid)
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			o.Owner = trustdir.Shown(u.Username) + " (" + o.Owner + ")"
		}
	}
	return o, true
}

// Plain says whether o is a regular file of this user's, or a link to
// one, of which "exists" says all.
func (o Occupant) Plain() bool { return !o.Dangling && o.Mode == 0 && o.Owner == "" }

// What is what a message says of the name, after it: "is a symlink to Y,
// which does not exist", "is a named pipe (FIFO)", "is a file of another
// user's, bob (uid 1001)", ...; "exists" when o is Plain.
func (o Occupant) What() string {
	owner := ""
	if o.Owner != "" {
		owner = " of another user's, " + o.Owner
	}
	thing := "a file" + owner
	if o.Mode != 0 {
		thing = kindOf(o.Mode) + owner
	}
	end := ", which does not exist"
	if o.loop {
		end = ", a loop of links that leads to no file"
	}
	switch {
	case o.Dangling && o.Owner != "":
		return "is a symlink" + owner + ", to " + trustdir.Shown(o.Link) + end
	case o.Dangling:
		return "is a symlink to " + trustdir.Shown(o.Link) + end
	case o.Link != "" && !o.Plain():
		return "is a symlink to " + trustdir.Shown(o.Link) + ", " + thing
	case o.Plain():
		return "exists"
	}
	return "is " + thing
}

// Remedy is what the user may do to free the name: "remove the link",
// "remove it", or "" when it is another user's to remove.
func (o Occupant) Remedy() string {
	switch {
	case o.Owner != "":
		return ""
	case o.Link != "":
		return "remove the link"
	}
	return "remove it"
}
