package reaper_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/reaper"
)

// A child whose arguments and environment execve would refuse (E2BIG) is
// refused with a *TooLargeError that names the largest string and says
// what to do, on demand and through a spare alike, and nothing is left
// started. A variable of 3 MB is beyond the 128 KiB one string may hold;
// 70 of 100 KB are beyond what any stack limit lets a process pass.
func TestStartTooLarge(t *testing.T) {
	many := []string{"PATH=/usr/bin:/bin"}
	for i := range 70 {
		many = append(many, fmt.Sprintf("LC_V%02d=", i)+strings.Repeat("v", 100_000))
	}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want []string
	}{
		{"one variable", nil, []string{"PATH=/usr/bin:/bin", "LC_BIG=" + strings.Repeat("a", 3_000_000)},
			[]string{"the environment is too large to start a program with: variable LC_BIG is 3000007 bytes, and one may hold at most 131071", "unset it or make it smaller"}},
		{"one argument", []string{"true", strings.Repeat("a", 200_000)}, []string{"PATH=/usr/bin:/bin"},
			[]string{"the command line is too large to start a program with: argument 1 is 200000 bytes"}},
		{"all of them", nil, many,
			[]string{"bytes in all (the largest: variable LC_V00, 100007 bytes), more than the", "ulimit -s", "unset or shorten variables"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachWay(t, func(t *testing.T, w way) {
				leakcheck.Check(t, leakcheck.Options{FDs: true})
				null, err := os.Open(os.DevNull)
				if err != nil {
					t.Fatal(err)
				}
				defer null.Close()
				args := tc.args
				if args == nil {
					args = []string{"true"}
				}
				c, err := w.start(t, reaper.Spec{Path: "/bin/true", Args: args, Env: tc.env, Files: []*os.File{null, null, null}})
				if err == nil {
					c.Kill()
					c.Wait()
					t.Fatal("started")
				}
				var tooLarge *reaper.TooLargeError
				if !errors.Is(err, syscall.E2BIG) || !errors.As(err, &tooLarge) {
					t.Fatalf("err = %v, want a *TooLargeError", err)
				}
				for _, want := range tc.want {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("err = %v\nwant it to say %q", err, want)
					}
				}
			})
		})
	}
}
