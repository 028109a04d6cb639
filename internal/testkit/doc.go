// Package testkit holds the helpers evalhost's tests share instead of
// copying: the real Python interpreter ([Python]) and one of a given
// version ([PythonVersion]), a Python module a test needs ([NeedModule]),
// golden-file comparison with the one -update flag ([Golden]), a frame
// collector ([Collector]), nbformat validation ([Nbformat]) and the line
// that makes importing nbformat cheap ([NbformatPrelude]), an IPython
// directory of the test process's own for the kernels its gateways start
// ([IsolateIPython]), the leak and hang checks every test that starts
// processes arms ([Clean]), an environment without what would change the
// code under test ([Hermetic]: every TestMain, and [Python], call it) and,
// on Linux, a wait for a process's state (WaitState: stopped, running
// again), a watch that fails a test at once when a process stops
// (FailIfStopped), a wait for the system call a process is blocked in
// (WaitSyscall, InSyscall) and one for a pipe or socket its reader stopped
// reading to be full (WaitPipeFull, WaitNoRoom), a process whose leader
// thread exits while another thread runs (StartLeaderExits: a zombie
// leader that has not ended, for internal/proctree's and
// internal/leakcheck's tests; TestLeaderExitsIsShared refuses copies of
// its script elsewhere), a wait for a goroutine of
// the test's process to block at a known point ([WaitParked]), and whether the binary
// runs under the race detector ([RaceEnabled]), which multiplies what a
// call allocates.
//
// It is imported by tests only. Its -update flag is registered in every
// test binary that imports it: `go test ./... -update` rewrites every
// golden file the selected tests compare. Calling [Python], [PythonVersion],
// [NeedModule] or [Nbformat] where the interpreter or the package is missing
// skips the test with what to install; nothing here fails a test for the
// machine it runs on, except a missing module under
// EVALHOST_TEST_REQUIRE_MODULES=1 ([RequireModulesEnv]), which make test
// sets after installing them: there a skip would hide the test.
package testkit
