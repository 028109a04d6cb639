package nbrun_test

import (
	"context"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/sessions"
)

// TestRunCellTags: the cell tags nbclient (and so papermill and
// jupyter-book) acts on. A cell tagged raises-exception may raise: its
// error is recorded and the run goes on, ok, its papermill status
// completed; one tagged skip-execution is not run, its outputs kept.
func TestRunCellTags(t *testing.T) {
	reg := newRegistry(t)
	nb := newNotebook(t,
		"print('first')",
		"raise ValueError('expected')",
		"print('skipped')",
		"print('after')")
	if err := nb.SetTags(1, []string{"raises-exception"}); err != nil {
		t.Fatal(err)
	}
	if err := nb.SetTags(2, []string{"skip-execution"}); err != nil {
		t.Fatal(err)
	}
	res, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: t.TempDir(), Papermill: &nbrun.Papermill{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != sessions.StatusOK || res.FailedCell() != -1 {
		t.Fatalf("status %s, failed cell %d; want ok, none", res.Status, res.FailedCell())
	}
	want := []string{"stream:first\n", "error:ValueError: expected", "", "stream:after\n"}
	for i, w := range want {
		if got := strings.Join(texts(nb, i), "|"); got != w {
			t.Errorf("cell %d outputs %q, want %q", i, got, w)
		}
	}
	if got := string(nb.Bytes()); strings.Contains(got, `"failed"`) || strings.Contains(got, `"exception": true`) {
		t.Errorf("the expected exception was recorded as a failure:\n%s", got)
	}
}
