package engine

import (
	"cmp"
	"fmt"
	"regexp"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// Sharding is the part of a sharded run or load one process plays: shard
// Index of Of (counted from 0, as Kubernetes' JOB_COMPLETION_INDEX), of
// the run named RunID. Every shard derives the same keys from RunID, so
// that all shards' requests of one trial meet on one key.
type Sharding struct {
	Index, Of int
	RunID     string
	// StartAt is the wall-clock instant of the first release; zero
	// releases each trial as soon as the shard is ready (no agreement).
	StartAt time.Time
	// Period is the time between two trials' releases (DefaultPeriod).
	Period time.Duration
	// Host names the machine the shard ran on, for the merge: histories
	// of shards on different machines are measured on different clocks.
	Host string
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// CheckRunID refuses a run id that would not make a clean key: it goes
// into every slug, visitor and item, and from there into URLs.
func CheckRunID(id string) error {
	if len(id) > MaxRunIDLength || !runIDPattern.MatchString(id) {
		return usage.Fieldf("RunID", "{} %q: want 1 to %d letters, digits, - or _, starting with a letter or digit (the same on every shard)", id, MaxRunIDLength)
	}
	return nil
}

// Span is the requests [lo, hi) of a burst of n that shard Index plays:
// the n requests split as evenly as possible, every one played once.
func (s *Sharding) Span(n int) (lo, hi int) {
	return s.Index * n / s.Of, (s.Index + 1) * n / s.Of
}

func (s *Sharding) Check(n int) error {
	if err := CheckRunID(s.RunID); err != nil {
		return err
	}
	if s.Index < 0 || s.Of < 1 || s.Index >= s.Of {
		return usage.Fieldf("Shard", "shard %d of %d; want 0 to %d", s.Index, s.Of, s.Of-1)
	}
	if n < s.Of {
		return usage.Fieldf("Requests", "%d shards cannot share %d requests; give each shard at least one ({Requests} %d or more)", s.Of, n, s.Of)
	}
	if s.Period < 0 {
		return Wants.Invalid("Period", s.Period)
	}
	return nil
}

// Slot is the instant trial number k of the shard is released at; zero
// when there is no agreed start.
func (s *Sharding) Slot(k int) time.Time {
	if s.StartAt.IsZero() {
		return time.Time{}
	}
	return s.StartAt.Add(time.Duration(k) * cmp.Or(s.Period, DefaultPeriod))
}

// DefaultPeriod is the time between two trials' release instants in a
// sharded run: room for staging, the burst and its answers.
const DefaultPeriod = time.Second

// MaxRunIDLength bounds --run-id: it goes into every key and URL.
const MaxRunIDLength = 40

// Shareable reports whether every shard reaches the same state through a
// target: a URL, a server (Redis, PostgreSQL), or an SQLite file named by
// path. The simulated stores and a temporary SQLite file live inside one
// racelab process, where other shards cannot reach them.
func Shareable(spec targets.Spec, e targets.Entry) bool {
	if !e.Embedded {
		return true
	}
	return spec.Store == "sqlite" && spec.Params.Get("path") != ""
}

// ErrNotShareable says which target cannot be sharded and what would do.
func ErrNotShareable(name string) error {
	return fmt.Errorf("%w: target %s lives inside each racelab process, so shards cannot share its keys; shard against a URL (racelab serve), redis, postgres or sqlite?path=FILE", results.ErrUsage, name)
}

// Splittable refuses a story whose trials shards cannot split
// (Scenario.Unsplittable). Its Field is Shard.
func Splittable(sc *Scenario) error {
	if sc.Unsplittable != "" {
		return usage.Fieldf("Shard", "%s: %s, so {} cannot split its trials over processes; run or load it without {}", sc.Name, sc.Unsplittable)
	}
	return nil
}
