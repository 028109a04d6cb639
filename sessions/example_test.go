package sessions_test

import (
	"context"
	"fmt"
	"os"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// Eval runs a request's cells in order in one session, streaming their
// frames to emit; state stays in the session for the next request.
func ExampleRegistry_Eval() {
	home, err := os.MkdirTemp("", "evalhost-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(home)
	reg := sessions.New(sessions.Config{Home: home})
	defer reg.Close()

	emit := func(cell int, f frames.Frame) {
		if f.Type == frames.TypeStdout {
			fmt.Printf("cell %d: %s", cell, f.Data)
		}
	}
	ctx := context.Background()
	for _, code := range []string{"x = 41\nprint('set')", "print(x + 1)"} {
		res, err := reg.Eval(ctx, sessions.Request{Session: "demo", Cells: []sessions.Cell{{Language: sessions.LangPython, Code: code}}}, emit)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("status:", res.Status, "execution count:", res.Cells[0].ExecutionCount)
	}
	// Output:
	// cell 0: set
	// status: ok execution count: 1
	// cell 0: 42
	// status: ok execution count: 2
}
