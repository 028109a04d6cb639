// Package remote proves evalhost's gateway backend against kernels on
// another host: a real Jupyter Enterprise Gateway 3.3 (its own venv)
// launching kernels over SSH (its DistributedProcessProxy) on a second host
// made of a network namespace, a link (a veth pair, or a TAP pair where
// the kernel has no netem) and sshd with key-only login
// (internal/remotetest). A cell's hostname and addresses show where it ran.
//
// The tests cover what a team meets when kernels leave the machine: state
// across cells, a tool call from the remote kernel, a timeout, an
// interpreter death and its retry, a 50 ms link delay (netem, or a
// forwarder between TAP devices where the kernel has no netem), the link
// going down mid-cell, and Enterprise Gateway refusing a root user's
// kernels. They need root, network namespaces, sshd and the venv
// (scripts/test-deps.sh); where any is missing they say so and skip.
package remote
