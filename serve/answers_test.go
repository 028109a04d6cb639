package serve

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Once the output's reader is gone, an answer is lost when a request is
// unanswered or an answer's write failed; one being written is waited
// for, as the client may have read it whole before it left.
func TestAnswersLost(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answering  bool  // the request's answer is being written
		writeErr   error // how that write ends
		want       bool
		wantAtOnce bool // lost returns before the write ends
	}{
		{"the answer written", true, nil, false, false},
		{"the answer's write failed", true, errors.New("broken pipe"), true, false},
		{"the request unanswered", false, nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newAnswers()
				a.accept()
				var written func(error)
				if tc.answering {
					written = a.answering()
				}
				res := make(chan bool, 1)
				go func() { res <- a.lost(context.Background()) }()
				synctest.Wait()
				select {
				case lost := <-res:
					if !tc.wantAtOnce || lost != tc.want {
						t.Fatalf("lost returned %v at once; want %v, after the write: %v", lost, tc.want, !tc.wantAtOnce)
					}
					return
				default:
					if tc.wantAtOnce {
						t.Fatal("lost blocks with a request unanswered")
					}
				}
				written(tc.writeErr)
				if lost := <-res; lost != tc.want {
					t.Fatalf("lost returned %v, want %v", lost, tc.want)
				}
			})
		})
	}
}
