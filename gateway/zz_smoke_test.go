package gateway

import (
	"context"
	"testing"
	"time"
	"fmt"

	"github.com/evalhost/evalhost/frames"
)

func TestSmoke(t *testing.T) {
	c, _ := NewClient(Config{URL: "http://127.0.0.1:18899", Token: "secret"})
	ctx := context.Background()
	k, err := c.StartKernel(ctx, KernelOptions{})
	if err != nil { t.Fatal(err) }
	defer k.Close()
	for i := 0; i < 10; i++ {
		start := time.Now()
		_, err := k.Execute(ctx, frames.Request{ID: "c1", Code: "1+1"}, func(f frames.Frame) {})
		fmt.Println(time.Since(start), err)
	}
}
