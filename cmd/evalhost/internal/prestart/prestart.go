package prestart

import (
	"os"

	"github.com/evalhost/evalhost/internal/reaper/launch"
)

func init() {
	if Wanted(os.Args[1:]) {
		launch.Begin()
	}
}

// Wanted says whether the command line is a run that starts its own
// interpreter: `run` without --session, which attaches to the background
// process instead. Flags are not parsed here (pflag is not initialised
// yet); a --session that is only the value of another flag is taken for
// one, which costs that run the head start.
func Wanted(args []string) bool {
	if len(args) == 0 || args[0] != "run" {
		return false
	}
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "--session" || len(a) > 10 && a[:10] == "--session=" {
			return false
		}
	}
	return true
}
