package sessions

import "github.com/evalhost/evalhost/backend"

// deathTeller is implemented by executors that know how their interpreter
// ended on its own (host.Process): nil while it runs or when it was
// closed or killed.
type deathTeller interface {
	Death() *backend.DeathError
}

// diedBetween records, for a batch's Python cell, how its interpreter
// ended on its own between the cell before and this one: the signal it
// died of (a Ctrl-\ passed on that landed as the cell before ended, a
// thread's kill) as the cell's Signal, or the status it exited with (a
// thread's os._exit(N), a C exit(N)) as its ExitStatus, Exited. python3
// would have ended so there, so a batch reports it as it reports such an
// end during the cell (settleDeath). It returns how, for the cell's
// message ("" when not known). Called before the interpreter is dropped.
func (c *cellRun) diedBetween() string {
	if !c.j.req.Batch || c.cell.Language != LangPython {
		return ""
	}
	dt, ok := c.j.s.current(c.cell.Language).(deathTeller)
	if !ok {
		return ""
	}
	d := dt.Death()
	switch {
	case d == nil:
		return ""
	case d.Signum != 0:
		c.res.Signal = d.Signum
	case c.exitedItself(d):
		c.res.Exited, c.res.ExitStatus = true, d.ExitCode
	}
	return d.How()
}
