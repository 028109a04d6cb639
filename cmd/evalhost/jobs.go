package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/daemon"
	"github.com/evalhost/evalhost/internal/plural"
	"github.com/evalhost/evalhost/internal/timeline"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

func init() { extraCommands["jobs"] = jobsMain }

// jobsMain lists the background process's jobs (cells of run --session
// --detach that went on past their timeout), or shows one with its output,
// after waiting for it or stopping it when asked.
func jobsMain(args []string, _ io.Reader, stdout, stderr io.Writer, _ *slog.Logger) int {
	fs := pflag.NewFlagSet("jobs", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: evalhost jobs [JOB [--offset N | --wait | --stop]] [--json]\n\n"+
			"Lists the jobs of the background process: cells of \"evalhost run --session NAME --detach\"\n"+
			"still running past their --timeout, and the last ones that ended. With JOB, shows that job\n"+
			"and its output.\n\nFlags:\n%s", fs.FlagUsages())
	}
	asJSON := fs.Bool("json", false, "write the reply as one JSON line (the serve protocol's jobs or job line, without an id)")
	wait := fs.Bool("wait", false, "with JOB: wait until it ends, then show it")
	stop := fs.Bool("stop", false, "with JOB: stop it (interrupt, then kill after the grace window; its session keeps its state), then show it")
	offset := fs.Int64("offset", 0, "with JOB: show its output from this byte on (the offset the last page named)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case fs.NArg() > 1:
		fmt.Fprintf(stderr, "evalhost jobs: give at most one JOB (see evalhost jobs), got %d arguments\n", fs.NArg())
		return exitUsage
	case (*wait || *stop) && fs.NArg() == 0:
		fmt.Fprintln(stderr, "evalhost jobs: --wait and --stop need a JOB (see evalhost jobs)")
		return exitUsage
	case *wait && *stop:
		fmt.Fprintln(stderr, "evalhost jobs: give --wait or --stop, not both")
		return exitUsage
	case fs.Changed("offset") && (fs.NArg() == 0 || *wait || *stop):
		fmt.Fprintln(stderr, "evalhost jobs: --offset needs a JOB and goes without --wait and --stop (they show the end of its output)")
		return exitUsage
	case *offset < 0:
		fmt.Fprintf(stderr, "evalhost jobs: --offset %d: want a byte offset, 0 or more\n", *offset)
		return exitUsage
	}
	if fs.NArg() == 0 {
		return listJobs(*asJSON, stdout, stderr)
	}
	op := "job"
	switch {
	case *wait:
		op = "wait"
	case *stop:
		op = daemon.OpStop
	}
	var job serve.Job
	req := map[string]any{"op": op, "id": "jobs", "job": fs.Arg(0)}
	if op == "job" {
		req["offset"] = *offset
	}
	where, err := askJob(req, &job)
	var ended *daemon.EndedError
	switch {
	case errors.As(err, &ended):
		fmt.Fprintf(stderr, "evalhost jobs: %v while this command waited; %s\n", ended, jobEnded(fs.Arg(0), where))
		return exitFailed
	case errors.Is(err, daemon.ErrNotRunning):
		fmt.Fprintf(stderr, "evalhost jobs: no job %q: no evalhost background process is running\n", fs.Arg(0))
		return exitFailed
	case err != nil:
		return askFailed("jobs", err, stderr)
	}
	if *asJSON {
		job.ID = "" // this command's request id, not the job's: as with no process
		b, _ := json.Marshal(job)
		fmt.Fprintln(stdout, string(b))
	} else {
		showJob(job.JobInfo, op == "job", stdout, stderr)
	}
	if op == daemon.OpStop {
		return exitOK // stopped as asked
	}
	return jobExitCode(job.JobInfo)
}

// askJob sends req, a job, wait or stop op, and decodes its job line into
// reply. A wait or stop may go on long; before it the command asks the
// process for its jobs: where is the job's session, so that when the
// process ends meanwhile the command can say whose state went, and record
// that it said so.
func askJob(req map[string]any, reply *serve.Job) (where *sessionAt, err error) {
	c, paths, err := dialDaemon()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if req["op"] == "job" {
		return nil, askOn(c, req, serve.TypeJob, reply)
	}
	var list serve.Jobs
	if err := askOn(c, map[string]string{"op": "jobs", "id": "where"}, serve.TypeJobs, &list); err != nil {
		return nil, err
	}
	for _, j := range list.Jobs {
		if j.ID == req["job"] {
			where = &sessionAt{session: j.Session, cwd: j.Cwd}
		}
	}
	// A ping behind the request: its pong says that the process has
	// taken the request (it reads a connection's lines in order), which
	// the timeline marks.
	asked := c.Answers()
	err = sendOn(c, req)
	if err == nil {
		err = sendOn(c, map[string]string{"op": "ping", "id": "waiting"})
	}
	if err == nil {
		err = replyOn(c, serve.TypeJob, reply, func(typ string, line []byte) {
			if typ == serve.TypePong && gjson.GetBytes(line, "id").String() == "waiting" {
				timeline.Mark("waiting", "op", req["op"], "job", req["job"])
			}
		})
	}
	ended := (*daemon.EndedError)(nil)
	switch {
	case !errors.As(err, &ended) || where == nil:
	case ended.Why == "":
		// Killed or crashed: no word of its own kept the session out of
		// what the next command finds (a stop does: it leaves a session
		// whose waiter it told out of lost.json).
		_ = daemon.ToldEnded(paths, ended.PID, where.session, where.cwd) // best effort: a failure costs a second telling
	case c.Answers() == asked:
		// Stopped before it read the request: it kept the session in
		// lost.json, so its next cell tells the loss, not this command.
		where = nil
	}
	return where, err
}

// sessionAt is the session a job runs in.
type sessionAt struct{ session, cwd string }

// jobEnded says what a process that ended took of job id: the job, and
// the state of its session (where, when known; else its next cell tells
// it).
func jobEnded(id string, where *sessionAt) string {
	if where == nil {
		return trustdir.Shown(id) + " ended with it"
	}
	return fmt.Sprintf("%s ended with it, and the state of its session %s is lost", trustdir.Shown(id), trustdir.Shown(where.session))
}

// jobExitCode is run's exit code for a job that ended (`jobs JOB --wait &&
// deploy` must not go on after a failed job); 0 while it runs. A job no
// Ctrl-C of this command can reach: one cancelled was stopped by another
// command (jobs --stop, kill, daemon stop), a failure (1), where run's 130
// would say this command was interrupted.
func jobExitCode(j sessions.JobInfo) int {
	switch {
	case j.State == sessions.JobRunning:
		return exitOK
	case j.Status == sessions.StatusCancelled:
		return exitFailed
	}
	return exitCode(sessions.Result{Status: j.Status}, false)
}

func listJobs(asJSON bool, stdout, stderr io.Writer) int {
	var list serve.Jobs
	err := askDaemon(map[string]string{"op": "jobs", "id": "jobs"}, serve.TypeJobs, &list)
	switch {
	case errors.Is(err, daemon.ErrNotRunning):
		list.Jobs, list.Type = []sessions.JobInfo{}, serve.TypeJobs
	case err != nil:
		return askFailed("jobs", err, stderr)
	}
	if asJSON {
		list.ID = "" // this command's request id: the line is the same with no process
		b, _ := json.Marshal(list)
		fmt.Fprintln(stdout, string(b))
		return exitOK
	}
	if len(list.Jobs) == 0 {
		fmt.Fprintln(stdout, "no jobs")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSESSION\tSTATUS\tELAPSED\tOUTPUT\tCWD")
	for _, j := range list.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%dB\t%s\n", j.ID, tableCell(j.Session), j.Status, elapsed(j), j.OutputBytes, tableCell(j.Cwd))
	}
	tw.Flush()
	return exitOK
}

// showJob prints a job's state on stderr, as run prints a cell's end, and
// its output on stdout: the page from the asked offset for the job op, the
// bounded tail of the whole run once it ended otherwise.
func showJob(j sessions.JobInfo, fromStart bool, stdout, stderr io.Writer) {
	text := ""
	switch {
	case fromStart && j.Output != nil:
		text = j.Output.Text
		if j.Output.Elided > 0 {
			fmt.Fprintf(stderr, "[no longer held: the first %s; the whole output is in %s]\n", plural.Of(j.Output.Elided, "byte"), j.Artifact)
		}
	case j.Result != nil:
		text = j.Result.Output.Text
	}
	if text != "" {
		io.WriteString(stdout, strings.TrimRight(text, "\n")+"\n")
	}
	line := fmt.Sprintf("%s in session %s: %s after %s", j.ID, trustdir.Shown(j.Session), j.Status, elapsed(j))
	if j.State == sessions.JobRunning {
		line = fmt.Sprintf("%s in session %s: still running after %s (at most %s)", j.ID, trustdir.Shown(j.Session), elapsed(j),
			time.Duration(j.MaxRuntimeMs)*time.Millisecond)
	}
	if j.Message != "" {
		line += ": " + j.Message
	}
	if fromStart && j.Output != nil && j.Output.More {
		line += fmt.Sprintf("; more output: evalhost jobs %s --offset %d", j.ID, j.Output.Next)
	}
	fmt.Fprintf(stderr, "[%s]\n", line)
}

func elapsed(j sessions.JobInfo) string {
	return (time.Duration(j.ElapsedMs) * time.Millisecond).Round(time.Second).String()
}
