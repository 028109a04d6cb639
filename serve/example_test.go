package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// A Go program does what `evalhost serve` does: requests in, replies out.
// Here the requests are one eval of two cells; the end of the input drains
// it, so Serve returns once its end is written.
func ExampleServer_Serve() {
	home, err := os.MkdirTemp("", "evalhost-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(home)

	requests := strings.NewReader(`{"op":"eval","id":"r1","session":"demo","cells":[{"code":"x = 41"},{"code":"print(x + 1)"}]}` + "\n")
	var replies bytes.Buffer
	srv := serve.New(serve.Config{Sessions: sessions.Config{Home: home}})
	if err := srv.Serve(context.Background(), requests, &replies); err != nil {
		fmt.Println(err)
		return
	}

	sc := bufio.NewScanner(&replies)
	for sc.Scan() {
		var m map[string]any
		json.Unmarshal(sc.Bytes(), &m)
		switch m["type"] {
		case serve.TypeHello:
			fmt.Println("hello, protocol", m["protocol"])
		case "stdout":
			fmt.Printf("%v cell %v stdout: %s", m["id"], m["cell"], m["data"])
		case serve.TypeCellEnd:
			fmt.Printf("%v cell %v: %v\n", m["id"], m["cell"], m["status"])
		case serve.TypeEnd:
			fmt.Printf("%v: %v\n", m["id"], m["status"])
		}
	}
	// Output:
	// hello, protocol 1.10
	// r1 cell 0: ok
	// r1 cell 1 stdout: 42
	// r1 cell 1: ok
	// r1: ok
}
