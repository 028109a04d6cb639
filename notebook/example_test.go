package notebook_test

import (
	"encoding/json"
	"fmt"

	"github.com/evalhost/evalhost/notebook"
)

// A program builds a notebook, records a cell's outputs and reads them
// back; nb.Bytes() is the .ipynb as nbformat writes it.
func ExampleNotebook_SetOutputs() {
	nb := notebook.New()
	if err := nb.Insert(0, notebook.Code, "print('hi')\n6 * 7"); err != nil {
		panic(err)
	}
	result, err := notebook.ExecuteResult(map[string]json.RawMessage{"text/plain": json.RawMessage(`"42"`)}, nil, 1)
	if err != nil {
		panic(err)
	}
	nb.SetOutputs(0, []notebook.Output{notebook.StreamOutput("stdout", "hi\n"), result})
	nb.SetExecutionCount(0, 1)
	for _, o := range nb.Outputs(0) {
		fmt.Printf("%s: %q\n", o.Type(), o.Text())
	}
	fmt.Print(nb.Text())
	// Output:
	// stream: "hi\n"
	// execute_result: "42"
	// # %% [code] cell:0
	// print('hi')
	// 6 * 7
}
