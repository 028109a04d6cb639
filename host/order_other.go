//go:build !linux

package host

// startRawReaders starts one reader per pipe of fd 1 and 2: their order is
// the order the readers' reads reach the pump (doc.go).
func (p *Process) startRawReaders() {
	p.wg.Add(1)
	go p.readRaw(1, p.outR)
	if p.errR != nil {
		p.wg.Add(1)
		go p.readRaw(2, p.errR)
	}
}
