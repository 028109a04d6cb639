package shared

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// checkScript imports what a local gateway needs and names what is missing.
const checkScript = `
import importlib.util, sys
missing = [m for m in ("kernel_gateway", "ipykernel") if importlib.util.find_spec(m) is None]
if missing:
    sys.stderr.write("cannot import " + ", ".join(missing))
    sys.exit(3)
`

// Check reports whether python can run a local gateway: a
// *MissingPackagesError (matching ErrMissingPackages) names the pip command
// when kernel_gateway or ipykernel is missing.
func Check(ctx context.Context, python string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", checkScript)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	detail := strings.TrimSpace(string(out))
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		return &MissingPackagesError{Python: python, Detail: detail}
	}
	if detail == "" {
		detail = err.Error()
	}
	return fmt.Errorf("check python %s for the gateway packages: %s: %w", python, detail, err)
}
