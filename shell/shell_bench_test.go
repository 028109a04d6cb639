package shell

import (
	"context"
	"io"
	"os/exec"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// Anchors for the sh benchmarks, run in the same process so ratios hold on a
// noisy machine: a fresh `bash -c` per cell is what a persistent shell saves.

func BenchmarkShellAnchorBashC(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShellTrueCell is the round trip of a trivial cell.
func BenchmarkShellTrueCell(b *testing.B) {
	s, err := Start(context.Background(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := frames.Request{ID: "b", Code: "true"}
	for b.Loop() {
		done, err := s.Execute(context.Background(), req, func(frames.Frame) {})
		if err != nil || done.Status != frames.StatusOK {
			b.Fatalf("%+v %v", done, err)
		}
	}
}

func BenchmarkShellStart(b *testing.B) {
	for b.Loop() {
		s, err := Start(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Close()
	}
}

const shellBulk = "head -c 16777216 /dev/zero | tr '\\0' x"

// BenchmarkShellAnchorBulk is the bulk pipeline writing into a Go pipe.
func BenchmarkShellAnchorBulk(b *testing.B) {
	b.SetBytes(16 << 20)
	for b.Loop() {
		cmd := exec.Command("bash", "-c", shellBulk)
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShellBulk is the same pipeline through the pty, as stdout frames.
func BenchmarkShellBulk(b *testing.B) {
	s, err := Start(context.Background(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(16 << 20)
	req := frames.Request{ID: "b", Code: shellBulk}
	for b.Loop() {
		n := 0
		_, err := s.Execute(context.Background(), req, func(f frames.Frame) { n += len(f.Data) })
		if err != nil || n != 16<<20 {
			b.Fatalf("got %d bytes, %v", n, err)
		}
	}
}
