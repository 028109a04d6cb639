package sessions_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// Two cells in one session: the second sees the first's state. Frames
// stream to the emit function as the cells run; the result summarises them.
func ExampleRegistry_Eval() {
	home, err := os.MkdirTemp("", "evalhost-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(home)
	reg := sessions.New(sessions.Config{Home: home})
	defer reg.Close()

	var stdout strings.Builder
	emit := func(cell int, f frames.Frame) {
		if f.Type == frames.TypeStdout {
			stdout.WriteString(f.Data)
		}
	}
	res, err := reg.Eval(context.Background(), sessions.Request{
		Session: "example",
		Cells: []sessions.Cell{
			{Language: sessions.LangPython, Code: "answer = 6 * 7"},
			{Language: sessions.LangPython, Code: "print('the answer is', answer)"},
			{Language: sessions.LangShell, Code: "echo from bash"},
		},
	}, emit)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(stdout.String())
	for _, c := range res.Cells {
		fmt.Println(c.Index, c.Language, c.Status)
	}
	// Output:
	// the answer is 42
	// from bash
	// 0 py ok
	// 1 py ok
	// 2 sh ok
}
