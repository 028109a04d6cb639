package sessions

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/evalhost/evalhost/streamsink"
)

// keptJobs is how many ended jobs stay readable (Job, WaitJob) after they
// end; older ones are forgotten, first ended first. Only the newest
// keptLogs of them keep their output in memory (up to 2 MiB each); the
// others' is in their artifact and their result's tail.
const (
	keptJobs = 256
	keptLogs = 8
)

var errJobStopped = errors.New("job stopped")

// Why a job was stopped, in its result's Message.
const (
	reasonStopRequest   = "stopped by request"
	reasonSessionClosed = "stopped because its session was closed"
	reasonShutdown      = "stopped because evalhost shut down"
	reasonKilled        = "stopped because every interpreter was killed (evalhost ended its work at once)"
	reasonSessionKilled = "stopped because its session's interpreters were killed (a second Ctrl-C of a command in a session of that name and cwd)"
)

// JobState is whether a job still runs.
type JobState string

// Job states.
const (
	JobRunning JobState = "running"
	JobDone    JobState = "done"
)

// JobInfo describes a job: a cell that detached at its timeout.
type JobInfo struct {
	ID       string   `json:"job"`
	Session  string   `json:"session"`
	Cwd      string   `json:"cwd"`
	Request  string   `json:"request"`
	Cell     int      `json:"cell"`
	Language string   `json:"language"`
	Title    string   `json:"title,omitempty"`
	State    JobState `json:"state"`
	// Status is StatusDetached while the job runs, then the cell's final
	// status; Message says why it is not ok.
	Status       Status    `json:"status"`
	Message      string    `json:"message,omitempty"`
	StartedAt    time.Time `json:"startedAt"`
	ElapsedMs    float64   `json:"elapsedMs"` // since the cell started, until it ended
	MaxRuntimeMs float64   `json:"maxRuntimeMs"`
	// Artifact holds the job's complete raw output ("artifact://<id>") once
	// it outgrew the bounded output; empty before.
	Artifact string `json:"artifact,omitempty"`
	// OutputBytes is the size of the job's output so far: bytes of the
	// sanitised text from the cell's start, the unit of every offset.
	OutputBytes int64 `json:"outputBytes"`
	// Output is a page of the output; only Registry.Job fills it.
	Output *JobOutput `json:"output,omitempty"`
	// Result is the cell's final result once the job ended; its Output is
	// the bounded tail of the whole run, as any cell's.
	Result *CellResult `json:"result,omitempty"`
}

// JobOutput is the output of a job from an offset on, bounded as a cell's
// output is (the registry's Sink MaxBytes and MaxLines) and cut after a
// line.
type JobOutput struct {
	Text   string `json:"text"`
	Offset int64  `json:"offset"` // where Text starts: the asked offset, or later by Elided
	Next   int64  `json:"next"`   // the offset to read from next
	// Elided counts bytes after the asked offset that are no longer held in
	// memory; they are in the artifact.
	Elided int64 `json:"elided,omitempty"`
	More   bool  `json:"more"` // output after Next is there already: read again
}

// jobTable is a registry's jobs: the running ones and the last keptJobs
// ended ones.
type jobTable struct {
	mu    sync.Mutex
	byID  map[string]*detachedJob
	ended []string // oldest first
	seq   uint64
}

// add names a job that just detached and files it; its number is
// Config.FirstJob's or the last one's next (cfg.OnJobID hears it).
func (t *jobTable) add(d *detachedJob, cfg *Config) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = map[string]*detachedJob{}
	}
	if t.seq == 0 && cfg.FirstJob > 1 {
		t.seq = cfg.FirstJob - 1
	}
	t.seq++
	id := "job-" + strconv.FormatUint(t.seq, 10)
	t.byID[id] = d
	if cfg.OnJobID != nil {
		cfg.OnJobID(t.seq)
	}
	return id
}

// retire files an ended job among the kept ones.
func (t *jobTable) retire(d *detachedJob) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = append(t.ended, d.id)
	if n := len(t.ended) - keptLogs - 1; n >= 0 {
		t.byID[t.ended[n]].log.drop()
	}
	for len(t.ended) > keptJobs {
		delete(t.byID, t.ended[0])
		t.ended = t.ended[1:]
	}
}

func (t *jobTable) get(id string) (*detachedJob, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d := t.byID[id]; d != nil {
		return d, nil
	}
	return nil, &JobError{ID: id}
}

func (t *jobTable) all() []*detachedJob {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := make([]*detachedJob, 0, len(t.byID))
	for _, d := range t.byID {
		list = append(list, d)
	}
	return list
}

func (t *jobTable) running() []*detachedJob {
	list := t.all()
	return slices.DeleteFunc(list, func(d *detachedJob) bool { return d.ended() })
}

// ended reports whether the job has settled.
func (d *detachedJob) ended() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// info describes the job, without output text.
func (d *detachedJob) info() JobInfo {
	c := d.c
	d.mu.Lock()
	res, endedAt := d.result, d.endedAt
	d.mu.Unlock()
	info := JobInfo{ID: d.id, Session: c.j.s.key.Session, Cwd: c.j.s.key.Cwd, Request: c.j.req.ID, Cell: c.index,
		Language: c.cell.Language, Title: c.cell.Title, State: JobRunning, Status: StatusDetached,
		StartedAt: d.start, MaxRuntimeMs: float64(d.maxRuntime.Milliseconds()), OutputBytes: d.log.total()}
	var out streamsink.Dump
	if res == nil {
		info.ElapsedMs = msSince(d.start, time.Now())
		out = c.sink.peek()
	} else {
		r := *res
		info.State, info.Status, info.Message, info.Result = JobDone, r.Status, r.Message, &r
		info.ElapsedMs = msSince(d.start, endedAt)
		out = r.Output
	}
	if out.ArtifactID != "" {
		info.Artifact = "artifact://" + out.ArtifactID
	}
	return info
}

// Job describes the job id with its output from offset on (0 for all of
// it that is still held; pass a reply's Next to read only what is new).
// It fails with a *JobError (ErrNoJob) for an unknown id and ErrBadRequest
// for an offset outside the output.
func (r *Registry) Job(id string, offset int64) (JobInfo, error) {
	d, err := r.jobs.get(id)
	if err != nil {
		return JobInfo{}, err
	}
	info := d.info()
	maxBytes, maxLines := r.cfg.Sink.MaxBytes, r.cfg.Sink.MaxLines
	if maxBytes <= 0 {
		maxBytes = streamsink.DefaultMaxBytes
	}
	if maxLines <= 0 {
		maxLines = streamsink.DefaultMaxLines
	}
	page, err := d.log.read(offset, maxBytes, maxLines)
	if err != nil {
		return JobInfo{}, err
	}
	info.OutputBytes = page.Total
	info.Output = &JobOutput{Text: page.Text, Offset: page.Offset, Next: page.Next, Elided: page.Elided, More: page.More}
	return info, nil
}

// Jobs lists the running jobs and the kept ended ones, oldest first,
// without their output.
func (r *Registry) Jobs() []JobInfo {
	list := r.jobs.all()
	infos := make([]JobInfo, 0, len(list))
	for _, d := range list {
		infos = append(infos, d.info())
	}
	slices.SortFunc(infos, func(a, b JobInfo) int { return a.StartedAt.Compare(b.StartedAt) })
	return infos
}

// WaitJob waits until the job id ends and returns its info with its final
// Result. When ctx ends first it returns the running job's info and ctx's
// error.
func (r *Registry) WaitJob(ctx context.Context, id string) (JobInfo, error) {
	d, err := r.jobs.get(id)
	if err != nil {
		return JobInfo{}, err
	}
	select {
	case <-d.done:
		return d.info(), nil
	case <-ctx.Done():
		return d.info(), context.Cause(ctx)
	}
}

// StopJob stops the job id as a cancel stops a cell (interrupt, the grace
// window, then a kill) and waits for it to end, as WaitJob. A job that
// catches the interrupt and ends on its own keeps its session's state, as
// a cell does. Stopping an ended job only reports it.
func (r *Registry) StopJob(ctx context.Context, id string) (JobInfo, error) {
	d, err := r.jobs.get(id)
	if err != nil {
		return JobInfo{}, err
	}
	d.stop(reasonStopRequest)
	return r.WaitJob(ctx, id)
}

// DrainJobs waits until no job runs, or ctx ends (then it returns ctx's
// error). Jobs that detach meanwhile are waited for too.
func (r *Registry) DrainJobs(ctx context.Context) error {
	for {
		running := r.jobs.running()
		if len(running) == 0 {
			return nil
		}
		for _, d := range running {
			select {
			case <-d.done:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
	}
}

// stopJob stops the session's job, if one runs, and waits for it to end.
func (s *session) stopJob(reason string) {
	if d := s.runningJob(); d != nil {
		d.stop(reason)
		<-d.done
	}
}
