package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// The stories' own N: how many simultaneous requests each story is about.
const (
	CounterN   = 10 // ten-hits-one-view
	QuotaN     = 12 // six-become-four
	InventoryN = 5  // five-checkouts
)

// RequestTimeout bounds each request of AnswersEveryRequest, as the burst
// engine's default --timeout (engine.DefaultTimeout) bounds each request
// of a run: an optimistic strategy retries within it.
const RequestTimeout = 10 * time.Second

// Retrier is a store whose optimistic strategy retries on conflict and
// counts the retries.
type Retrier interface {
	Retries() int64
}

// Tally is what rounds of one story came to, request by request.
type Tally struct {
	Story    string // "counter", "quota", "inventory"
	N        int    // requests per burst
	Rounds   int
	Requests int   // Rounds × N
	Errored  int   // requests that answered an error
	Wrong    int   // rounds without errors whose outcome was not the exact one
	Retries  int64 // the store's retries over these rounds, when it counts them
	FirstErr error // the first request error, if any
	Example  string
}

// String is the tally in one line, for logs.
func (t Tally) String() string {
	s := fmt.Sprintf("%s at N=%d: %d rounds, %d of %d requests errored, %d rounds wrong, %d retries",
		t.Story, t.N, t.Rounds, t.Errored, t.Requests, t.Wrong, t.Retries)
	if t.FirstErr != nil {
		s += fmt.Sprintf(" (first error: %v)", t.FirstErr)
	}
	if t.Example != "" {
		s += " (e.g. " + t.Example + ")"
	}
	return s
}

// AnswersEveryRequest runs every story rounds times at its own N (CounterN,
// QuotaN, InventoryN), as subtests, each request bounded by RequestTimeout:
// CounterAnswers, QuotaAnswers and InventoryAnswers.
func AnswersEveryRequest(t *testing.T, s Store, rounds int) {
	t.Helper()
	t.Run("counter", func(t *testing.T) { CounterAnswers(t, s, rounds) })
	t.Run("quota", func(t *testing.T) { QuotaAnswers(t, s, rounds) })
	t.Run("inventory", func(t *testing.T) { InventoryAnswers(t, s, rounds) })
}

// CounterAnswers runs rounds bursts of CounterN hits on a fresh slug, each
// bounded by RequestTimeout, and fails unless every request answered
// without an error and every round was exact (CounterExact's outcome).
// Unlike CounterExact it does not stop at the first error: it counts them
// all, because an errored request proves nothing either way, and a
// strategy that holds only by erroring out of its contention (giving up
// its retries too early) must fail here with the figure. It logs and
// answers the tally.
func CounterAnswers(tb testing.TB, s Counter, rounds int) Tally {
	tb.Helper()
	return answers(tb, s, "counter", CounterN, rounds, counter(s).want(CounterN), true,
		func(ctx context.Context, key string, _ int) (bool, int64, error) {
			total, err := s.Hit(ctx, key)
			return true, total, err
		}, s.Views)
}

// QuotaAnswers is CounterAnswers for QuotaN downloads by a fresh visitor
// (QuotaExact's outcome).
func QuotaAnswers(tb testing.TB, s Quota, rounds int) Tally {
	tb.Helper()
	return answers(tb, s, "quota", QuotaN, rounds, quota(s).want(QuotaN), false,
		func(ctx context.Context, key string, _ int) (bool, int64, error) {
			granted, _, err := s.Consume(ctx, key, QuotaLimit)
			return granted, 0, err
		}, s.Count)
}

// InventoryAnswers is CounterAnswers for InventoryN checkouts of a fresh
// item (InventoryExact's outcome).
func InventoryAnswers(tb testing.TB, s Inventory, rounds int) Tally {
	tb.Helper()
	return answers(tb, s, "inventory", InventoryN, rounds, inventory(s).want(InventoryN), false,
		func(ctx context.Context, key string, i int) (bool, int64, error) {
			won, err := s.Checkout(ctx, key, fmt.Sprintf("buyer-%d", i))
			return won, 0, err
		}, s.Claims)
}

// answers tallies rounds of one story, logs the tally and fails tb unless
// no request errored and every round was exact.
func answers(tb testing.TB, s any, name string, n, rounds int, want Outcome, totals bool,
	one func(ctx context.Context, key string, i int) (bool, int64, error),
	read func(context.Context, string) (int64, error)) Tally {
	tb.Helper()
	tl := tally(tb, s, name, n, rounds, want, totals, one, read)
	tb.Log(tl)
	if tl.Errored > 0 || tl.Wrong > 0 {
		tb.Errorf("want every request answered and every round exact; got %v", tl)
	}
	return tl
}

// tally runs rounds bursts of n requests made by one, each on a fresh key
// and bounded by RequestTimeout, reads each key back with read, and counts
// what happened.
func tally(tb testing.TB, s any, name string, n, rounds int, want Outcome, totals bool,
	one func(ctx context.Context, key string, i int) (bool, int64, error),
	read func(context.Context, string) (int64, error)) Tally {
	tb.Helper()
	ctx := tb.Context()
	r, _ := s.(Retrier)
	var before int64
	if r != nil {
		before = r.Retries()
	}
	tl := Tally{Story: name, N: n, Rounds: rounds, Requests: rounds * n}
	type answer struct {
		yes   bool
		total int64
		err   error
	}
	for round := range rounds {
		key := Key(tb, round)
		answers := Burst(n, func(i int) answer {
			rctx, cancel := context.WithTimeout(ctx, RequestTimeout)
			defer cancel()
			yes, total, err := one(rctx, key, i)
			return answer{yes, total, err}
		})
		var got Outcome
		if totals {
			got.Totals = []int64{}
		}
		errored := 0
		for _, a := range answers {
			switch {
			case a.err != nil:
				errored++
				if tl.FirstErr == nil {
					tl.FirstErr = fmt.Errorf("round %d: %w", round+1, a.err)
				}
			case a.yes:
				got.Allowed++
			default:
				got.Refused++
			}
			if a.err == nil && totals {
				got.Totals = append(got.Totals, a.total)
			}
		}
		tl.Errored += errored
		if errored > 0 {
			continue // an errored round proves nothing about the outcome
		}
		slices.Sort(got.Totals)
		counted, err := read(ctx, key)
		if err != nil {
			tb.Fatalf("%s round %d: read back: %v", name, round+1, err)
		}
		got.Counted = counted
		if !got.equal(want) {
			tl.Wrong++
			tl.Example = fmt.Sprintf("round %d: got %v, want %v", round+1, got, want)
		}
	}
	if r != nil {
		tl.Retries = r.Retries() - before
	}
	return tl
}
