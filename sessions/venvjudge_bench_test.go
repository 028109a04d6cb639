package sessions

import (
	"testing"
)

// BenchmarkJudgeVenv is the judgement of a cwd venv an uncached
// resolution pays: a venv as python -m venv makes it (pip, and
// setuptools where the python bundles it) with a project installed
// editable.
func BenchmarkJudgeVenv(b *testing.B) {
	cwd := b.TempDir()
	editableVenv(b, cwd, true)
	b.ResetTimer()
	for b.Loop() {
		if err := judgeVenv(cwd, ".venv", nil); err != nil {
			b.Fatal(err)
		}
	}
}
