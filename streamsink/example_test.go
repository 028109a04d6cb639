package streamsink_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// One sink per cell: pass every frame through it, forward what it returns,
// and put its dump into the cell summary.
func Example() {
	dir, _ := os.MkdirTemp("", "artifacts")
	defer os.RemoveAll(dir)
	sink, err := streamsink.New(streamsink.Options{
		Store:    streamsink.NewStore(dir), // streamsink.ArtifactsDir(home) in a real host
		MaxLines: 3,
	})
	if err != nil {
		panic(err)
	}
	cell := []frames.Frame{
		{Type: frames.TypeStdout, Data: "\x1b[1mtraining\x1b[0m\n"},
		{Type: frames.TypeStdout, Data: " 10%\r 60%\r100%\n"},
		{Type: frames.TypeStdout, Data: "epoch 1\nepoch 2\n"},
	}
	for _, f := range cell {
		live := sink.Frame(f) // forward live.Data to the client
		fmt.Printf("live %q\n", live.Data)
	}
	sink.Close()
	d := sink.Dump()
	fmt.Print(strings.NewReplacer(d.ArtifactPath, "<path>", d.ArtifactID, "<id>").Replace(d.String()))
	fmt.Println(d.Truncated, d.TotalLines, d.KeptLines)
	// Output:
	// live "training\n"
	// live " 10%\r 60%\r100%\n"
	// live "epoch 1\nepoch 2\n"
	// […1 line elided…]
	// [full output: artifact://<id> (48 B) at <path>]
	// 100%
	// epoch 1
	// epoch 2
	// true 4 3
}
