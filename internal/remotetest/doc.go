// Package remotetest gives tests the pieces of a remote-kernel setup, real
// ones: a second host (a network namespace with its own hostname, joined
// to this one by a link, running sshd with key-only login) and a
// Jupyter Enterprise Gateway 3.3 from its own venv, whose kernels run
// locally or on that host over SSH (its DistributedProcessProxy).
//
// # Contract
//
// [NewHost] and [StartGateway] take a testing.TB and either return a working
// fixture or skip the test with the reason (not root, no network
// namespaces, sshd or the Enterprise Gateway venv missing: run
// scripts/test-deps.sh); they fail the test only when the machine has what
// they need and setting up still goes wrong. Each registers its teardown with
// t.Cleanup, and each also hands its teardown to a watcher process that runs
// it if the test process dies first (a go test timeout, SIGKILL), so no
// namespace, interface, sshd, gateway or kernel outlives the test either
// way. The Enterprise Gateway venv is looked for at $EVALHOST_EG_VENV, else
// $XDG_CACHE_HOME/evalhost-test/enterprise-gateway-3.3.0 (scripts/test-deps.sh
// makes it there).
//
// A Host needs Linux (network namespaces); elsewhere NewHost skips. Its
// link is a veth pair where the kernel has netem; where it has not (a
// Firecracker guest's kernel has no qdiscs to speak of) it is two TAP
// devices, one in each namespace, joined by a forwarder in the test
// process that copies every Ethernet frame across, holding each for the
// delay asked of its direction (in order, a burst held once, not frame
// after frame). Host.Kind says which. With neither netem nor /dev/net/tun
// the link is a veth pair and Delay skips the test. The forwarder's goroutines end with
// the Host's teardown; the TAP devices go with the files that process
// holds, so even its death leaves none behind.
//
// A Host's faults are real: SetLink takes this side of the link down,
// Delay makes every frame this host sends take d longer to arrive (netem,
// or the forwarder), so a round trip takes d longer; Die kills every
// process of the host. Hidden is a directory this host has and the other
// lacks. TempDir is the host's own temporary directory (its sessions'
// TMPDIR, a tmpfs there): what its kernels leave in it goes with the host.
// Calling a Host's methods after its teardown is wrong and fails the test.
//
// Nothing a fixture makes stays in this host's temporary directory: its
// directories go at cleanup, and when the test process dies first, the
// watcher removes them and its own output file after the teardown.
package remotetest
