package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// Jupytext's own percent-format examples (percent/testdata/jupytext, MIT)
// run with `evalhost run` give the outputs and execution counts nbclient
// gives their paired notebooks: the same cells run (raw and markdown ones
// never, frozen and active-ipynb ones as Jupytext reads them), magics
// Jupytext commented out run as magics.
func TestJupytextExamplesRunAsTheirNotebooks(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "nbclient, ipykernel", "nbclient ipykernel")
	scripts, err := filepath.Glob("../percent/testdata/jupytext/*.py")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	hasPandas := exec.Command("python3", "-c", "import pandas, matplotlib").Run() == nil
	dir := t.TempDir()
	var args []string
	for _, script := range scripts {
		if script, err = filepath.Abs(script); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(script), ".py")
		if name == "nteract_with_parameter" && !hasPandas {
			t.Logf("skipping %s: pandas is not installed", name)
			continue
		}
		cmd := command(t, "run", "--json", script)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("evalhost run %s: %v\n%s%s", name, err, out, stderrOf(err))
		}
		ndjson := filepath.Join(dir, name+".ndjson")
		if err := os.WriteFile(ndjson, out, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, script, strings.TrimSuffix(script, ".py")+".ipynb", ndjson)
	}
	cmp := exec.Command("python3", append([]string{"testdata/compare_percent_run.py"}, args...)...)
	cmp.Dir = "."
	if out, err := cmp.CombinedOutput(); err != nil {
		t.Fatalf("outputs differ from nbclient's: %v\n%s", err, out)
	}
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
