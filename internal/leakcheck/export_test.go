package leakcheck

// Recorder is recorder for this package's external tests (package
// leakcheck_test), which may import testkit: testkit imports this package,
// so its own tests may not.
type Recorder = recorder

// Finish is finish, for them.
func (r *recorder) Finish() string { return r.finish() }
