package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errRefused = errors.New("refused")

func TestDo(t *testing.T) {
	other := errors.New("other")
	tests := []struct {
		name         string
		max          int
		answers      []error // one per attempt; the last repeats
		want         error   // nil, other, or errGaveUp
		wantAttempts int
		wantRetries  int64
	}{
		{"first try", 0, []error{nil}, nil, 1, 0},
		{"refused then done", 0, []error{errRefused, errRefused, nil}, nil, 3, 2},
		{"another error ends it", 0, []error{errRefused, other}, other, 2, 1},
		{"bound reached", 3, []error{errRefused}, errGaveUp, 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &RetryLoop{Base: time.Microsecond, Cap: time.Microsecond, MaxAttempts: tt.max,
				Refused: func(err error) bool { return errors.Is(err, errRefused) }}
			attempts, gotAttempts := 0, 0
			err := l.Do(t.Context(), func() error {
				attempts++
				return tt.answers[min(attempts, len(tt.answers))-1]
			}, func(n int, last, deadline error) error {
				gotAttempts = n
				if !errors.Is(last, errRefused) || deadline != nil {
					t.Errorf("gaveUp(%d, %v, %v), want the last refusal and no deadline", n, last, deadline)
				}
				return errGaveUp
			})
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("Do = %v, want %v", err, tt.want)
			}
			if attempts != tt.wantAttempts {
				t.Errorf("%d attempts, want %d", attempts, tt.wantAttempts)
			}
			if tt.want == errGaveUp && gotAttempts != tt.wantAttempts {
				t.Errorf("gaveUp told %d attempts, want %d", gotAttempts, tt.wantAttempts)
			}
			if got := l.Retries(); got != tt.wantRetries {
				t.Errorf("Retries = %d, want %d", got, tt.wantRetries)
			}
		})
	}
}

var errGaveUp = errors.New("gave up")

// TestDoDeadline checks that a request whose deadline would pass before its
// next attempt gives up at once, with the context's error.
func TestDoDeadline(t *testing.T) {
	l := &RetryLoop{Base: time.Hour, Cap: time.Hour, Refused: func(err error) bool { return errors.Is(err, errRefused) }}
	// The wait is drawn up to an hour, so a deadline a minute away fitted
	// it about once in 60 runs, and the test then slept; a millisecond
	// fits it about once in 3.6 million.
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	start := time.Now()
	var deadline error
	err := l.Do(ctx, func() error { return errRefused }, func(_ int, _, d error) error {
		deadline = d
		return errGaveUp
	})
	if !errors.Is(err, errGaveUp) || !errors.Is(deadline, context.DeadlineExceeded) {
		t.Errorf("Do = %v with deadline %v, want a give-up on context.DeadlineExceeded", err, deadline)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("gave up after %v, want at once", waited)
	}
}
