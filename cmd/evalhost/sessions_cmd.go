package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/pflag"
	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// sessionsMain lists the background process's live sessions.
func sessionsMain(args []string, _ io.Reader, stdout, stderr io.Writer, _ *slog.Logger) int {
	fs := pflag.NewFlagSet("sessions", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: evalhost sessions [--json]\n\nLists the sessions \"evalhost run --session\" keeps in the background process:\n"+
			"NAME, CWD (a session is a NAME in a directory: the same NAME elsewhere is another),\n"+
			"PYTHON, BUSY (yes, or the job running in it), IDLE. \"evalhost kill NAME\" ends the\n"+
			"current directory's NAME.\n\nFlags:\n%s", fs.FlagUsages())
	}
	asJSON := fs.Bool("json", false, "write the list as one JSON line")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "evalhost sessions: takes no NAME, got %q (to end a session: evalhost kill NAME)\n", fs.Arg(0))
		return exitUsage
	}
	var list serve.Sessions
	err := askDaemon(map[string]string{"op": "sessions", "id": "ls"}, serve.TypeSessions, &list)
	switch {
	case errors.Is(err, daemon.ErrNotRunning):
		if *asJSON {
			fmt.Fprintln(stdout, `{"sessions":[],"type":"sessions"}`)
		} else {
			fmt.Fprintln(stdout, "no sessions (no evalhost background process is running)")
		}
		return exitOK
	case err != nil:
		return askFailed("sessions", err, stderr)
	}
	if *asJSON {
		// serve's sessions line without this command's request id, so
		// it is the same line as with no process running.
		b, _ := json.Marshal(struct {
			Sessions []sessions.Info `json:"sessions"`
			Type     string          `json:"type"`
		}{list.Sessions, list.Type})
		fmt.Fprintln(stdout, string(b))
		return exitOK
	}
	if len(list.Sessions) == 0 {
		fmt.Fprintln(stdout, "no sessions")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCWD\tPYTHON\tBUSY\tIDLE")
	for _, s := range list.Sessions {
		idle := "-"
		if !s.Busy {
			idle = time.Since(s.LastUsed).Round(time.Second).String()
		}
		busy := "no"
		switch {
		case s.Job != "":
			busy = s.Job // see evalhost jobs
		case s.Busy:
			busy = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tableCell(s.Session), tableCell(s.Cwd), tableCell(s.Python), busy, idle)
	}
	tw.Flush()
	return exitOK
}

// tableCell shows the user's text or path in a column of the sessions
// and jobs tables so that none drives the terminal or breaks a row (trustdir.Shown),
// and none reads as another: one that is empty or holds white space is
// quoted, as Shown quotes what is not printable (a session named " " was
// a blank, "a b" two columns).
func tableCell(s string) string {
	if s == "" || strings.ContainsFunc(s, unicode.IsSpace) {
		return strconv.Quote(s)
	}
	return trustdir.Shown(s)
}

// askDaemon sends one request to the live background process and decodes
// its reply of type want; ErrNotRunning when there is none.
func askDaemon(req any, want string, reply any) error {
	c, _, err := dialDaemon()
	if err != nil {
		return err
	}
	defer c.Close()
	return askOn(c, req, want, reply)
}

// dialDaemon attaches to the live background process of this user's home.
func dialDaemon() (*daemon.Client, daemon.Paths, error) {
	home, err := evalhostHome()
	if err != nil {
		return nil, daemon.Paths{}, homeError{err}
	}
	paths := daemon.PathsFor(home)
	c, err := daemon.Dial(paths)
	return c, paths, err
}

// askOn is askDaemon on a connection made already.
func askOn(c *daemon.Client, req any, want string, reply any) error {
	if err := sendOn(c, req); err != nil {
		return err
	}
	return replyOn(c, want, reply, nil)
}

// sendOn sends req; a connection the process closed is an
// *daemon.EndedError, as for a reply. A process that ended with a stop
// wrote why before it stopped reading (its stopping line, which Next
// keeps): it is read first, so a stop is not told as a kill, "killed or
// crashed", with the telling a kill makes (daemon.ToldEnded).
func sendOn(c *daemon.Client, req any) error {
	err := c.Send(req)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		for c.Ending() == "" {
			if _, rerr := c.Next(); rerr != nil {
				break // its end: what it said is kept
			}
		}
		return &daemon.EndedError{PID: c.Hello.PID, Why: c.Ending(), Err: err} // it ended since its last line
	}
	return err
}

// replyOn reads the reply of type want into reply; other, when set, gets
// the lines of other types that come before it.
func replyOn(c *daemon.Client, want string, reply any, other func(typ string, line []byte)) error {
	for {
		line, err := c.Next()
		if hung := (*daemon.HungError)(nil); errors.As(err, &hung) {
			return err // it says what to do
		}
		if ended := (*daemon.EndedError)(nil); errors.As(err, &ended) {
			return err // it says why, when the process said
		}
		if err != nil {
			return fmt.Errorf("the background process did not answer: %w", err)
		}
		switch typ := gjson.GetBytes(line, "type").String(); typ {
		case want:
			return json.Unmarshal(line, reply)
		case serve.TypeRequestError:
			if why := c.Ending(); why != "" { // what it was asked was cancelled as it ended
				return &daemon.EndedError{PID: c.Hello.PID, Why: why}
			}
			return errors.New(gjson.GetBytes(line, "error").String())
		default:
			if other != nil {
				other(typ, line)
			}
		}
	}
}
