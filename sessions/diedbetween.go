package sessions

import "github.com/evalhost/evalhost/backend"

// deathTeller is implemented by executors that know how their interpreter
// ended on its own (host.Process): nil while it runs or when it was
// closed or killed.
type deathTeller interface {
	Death() *backend.DeathError
}

// diedBetween records, for a batch's Python cell, the signal its
// interpreter died of on its own between the cell before and this one (a
// Ctrl-\ passed on that landed as the cell before ended, a thread's kill):
// python3 would have died of it there, so a batch reports it as the
// cell's Signal, as a death during the cell is (settleDeath). Called
// before the interpreter is dropped.
func (c *cellRun) diedBetween() {
	if !c.j.req.Batch || c.cell.Language != LangPython {
		return
	}
	s := c.j.s
	s.mu.Lock()
	ex := s.execs[c.cell.Language]
	s.mu.Unlock()
	if dt, ok := ex.(deathTeller); ok {
		if d := dt.Death(); d != nil {
			c.res.Signal = d.Signum
		}
	}
}
