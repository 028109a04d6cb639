package nbrun_test

import (
	"context"
	"fmt"
	"os"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/nbrun"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// A Go program runs a notebook through sessions: the configuration the
// evalhost command uses (config.Sessions reads EVALHOST_HOME, the backend
// and PI_PY), a registry, and nbrun.Run, which writes the outputs into the
// notebook; nb.Save would then write the .ipynb.
func ExampleRun() {
	home, err := os.MkdirTemp("", "evalhost-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	os.Setenv("EVALHOST_HOME", home) // a program would leave the user's default
	defer os.Unsetenv("EVALHOST_HOME")

	cfg, err := config.Sessions(config.Backend{})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := sessions.New(cfg)
	defer reg.Close()

	nb := notebook.New()
	nb.Insert(0, notebook.Markdown, "# Answer")
	nb.Insert(1, notebook.Code, "x = 6 * 7\nprint('computing')\nx")
	res, err := nbrun.Run(context.Background(), reg, nb, nbrun.Options{Cwd: home})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status)
	for _, o := range nb.Outputs(1) {
		fmt.Printf("%s: %q\n", o.Type(), o.Text())
	}
	// Output:
	// ok
	// stream: "computing\n"
	// execute_result: "42"
}
