package testkit

import (
	"os"
	"strings"
)

// IsolateIPython gives the kernels of every Jupyter kernel gateway this test
// process starts, itself or through a process it starts (evalhost's shared
// gateway), an IPython directory of their own instead of ~/.ipython: test
// kernels sharing the user's history database, under load, logged "History
// logging moved to new session", and wrote the tests' cells into the
// user's history. It sets IPYTHONDIR to a new temporary directory, and
// names it in KG_ENV_PROCESS_WHITELIST, since kernel_gateway launches a
// kernel with PATH and only the variables listed there. Call it from
// TestMain before a gateway starts; remove deletes the directory.
func IsolateIPython() (remove func(), err error) {
	dir, err := os.MkdirTemp("", "evalhost-test-ipython-")
	if err != nil {
		return nil, err
	}
	pass := os.Getenv("KG_ENV_PROCESS_WHITELIST")
	switch {
	case pass == "":
		pass = "IPYTHONDIR"
	case !strings.Contains(","+pass+",", ",IPYTHONDIR,"):
		pass += ",IPYTHONDIR"
	}
	if err := os.Setenv("IPYTHONDIR", dir); err != nil {
		return nil, err
	}
	if err := os.Setenv("KG_ENV_PROCESS_WHITELIST", pass); err != nil {
		return nil, err
	}
	return func() { _ = os.RemoveAll(dir) }, nil
}
