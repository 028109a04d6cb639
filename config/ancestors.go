package config

import (
	"errors"
	"fmt"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// checkAncestors refuses a home whose place another user controls: anyone
// who may rename entries in a directory above it (its owner, when that is
// neither the user nor root; everyone, when it is world-writable without
// the sticky bit) can move the checked home aside and put their own, with
// a runner cache or modules of their making, in its place. A symbolic link
// on the way, the home itself too, is judged by its owner, who may point it
// elsewhere; the directories a link leads through are checked too.
// Group-writable directories are let through: a shared project directory is
// common, and its group is trusted with the project's code anyway. The
// judgement is package trustdir's ([trustdir.Way]).
func checkAncestors(home string) error {
	_, err := trustdir.Way(home)
	var e *trustdir.Error
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &e):
		return fmt.Errorf("evalhost home %s: %w", home, err)
	}
	fix := "set EVALHOST_HOME to a directory under one of your own"
	switch {
	case e.Role == trustdir.Self:
		fix = "set EVALHOST_HOME to a directory of your own"
	case e.Problem == trustdir.OpenToAll:
		fix = "run: " + e.Fix() + ", or " + fix
	}
	return &UnsafeDirError{What: "evalhost home", Path: home, Reason: e.Reason(), Fix: fix}
}
