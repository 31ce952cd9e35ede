package results

import (
	"time"
)

// ShardOrigin says where a merged result came from: the shards of one run.
type ShardOrigin struct {
	RunID  string `json:"run_id"`
	Shards int    `json:"shards"`
	// Hosts are the machines the shards ran on, each once, in shard order.
	Hosts []string `json:"hosts,omitempty"`
	// StartAt is the agreed first release, nil when there was none.
	StartAt *time.Time `json:"start_at,omitempty"`
}

// ShardSchemaVersion names the shape of one shard's part of a sharded run
// or load. A part is not a result: a run's part holds only its share of
// each burst and no read-back, so nothing in it can be judged alone, and
// it has a schema of its own that `racelab report` never mistakes for a
// verdict. Bump it whenever a field changes meaning or goes away.
const ShardSchemaVersion = "racelab/shard/v1"

// ShardKind says whether a part is of a run (bursts) or of a load.
type ShardKind string

// The kinds of part.
const (
	ShardRun  ShardKind = "run"
	ShardLoad ShardKind = "load"
)

// ShardResult is one shard's part of a sharded run (Run) or load (Load):
// what its requests were told, for `racelab verify` to merge with the
// other parts and judge after reading every key back.
type ShardResult struct {
	Schema string    `json:"schema"`
	Kind   ShardKind `json:"kind"`
	RunID  string    `json:"run_id"`
	// Shard counts from 0; Shards is how many parts the run has.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// StartAt is the agreed first release, nil when there was none;
	// Period the time between trials' releases.
	StartAt *time.Time    `json:"start_at,omitempty"`
	Period  time.Duration `json:"period_ns,omitempty"`
	Host    string        `json:"host,omitempty"`
	Run     *ShardRunPart `json:"run,omitempty"`
	Load    *LoadResult   `json:"load,omitempty"`
}

// ShardRunPart is a run's part: the plan every shard shares, and this
// shard's requests of every trial.
type ShardRunPart struct {
	Scenario string `json:"scenario"`
	Rule     string `json:"rule"`
	// Settings are the story's own settings, as in Result: verify finds
	// the story as the shards played it (a race file by its path and
	// hash).
	Settings *Settings `json:"settings,omitempty"`
	// Requests is N, the whole burst; Lo and Hi the requests [Lo, Hi)
	// this shard fired.
	Requests int           `json:"requests"`
	Lo       int           `json:"lo"`
	Hi       int           `json:"hi"`
	Trials   int           `json:"trials"`
	Seed     int64         `json:"seed"`
	Timeout  time.Duration `json:"timeout_ns"`
	// Interrupted says the shard was cancelled: its trials are partial.
	Interrupted bool          `json:"interrupted,omitempty"`
	Targets     []ShardTarget `json:"targets"`
}

// ShardTarget is one target's trials in a shard.
type ShardTarget struct {
	Target    string       `json:"target"`
	Spec      string       `json:"spec"`
	Guarantee string       `json:"guarantee"`
	Expect    Expectation  `json:"expect"`
	Strict    bool         `json:"strict"`
	Error     string       `json:"error,omitempty"`
	Trials    []ShardTrial `json:"trials"`
}

// ShardTrial is a shard's share of one burst. Its requests are numbered
// within the whole burst, and their instants count from the agreed
// release instant (or the shard's own release, without one).
type ShardTrial struct {
	Index    int       `json:"index"`
	Key      string    `json:"key"`
	Requests []Request `json:"requests"`
	// Arrivals are the server's arrival instants (Racelab-Arrival) in
	// Unix nanoseconds, one per request, when the server reported them.
	Arrivals []int64 `json:"arrivals_unix_ns,omitempty"`
	Retries  int64   `json:"retries,omitempty"`
	// Readback is what this shard kept for a rule that judges the answers
	// (a race file's): its share of them, in request order, and what the
	// setup it ran captured. Verify puts the shares together.
	Readback *Readback `json:"readback,omitempty"`
}

// Outcome says how a shard's play went: interrupted, and the first
// target it could not play, as "target: why" ("" when none failed).
func (s *ShardResult) Outcome() (interrupted bool, failed string) {
	note := func(target, why string) {
		if failed == "" && why != "" {
			failed = target + ": " + why
		}
	}
	if r := s.Run; r != nil {
		interrupted = r.Interrupted
		for _, t := range r.Targets {
			note(t.Target, t.Error)
		}
	}
	if l := s.Load; l != nil {
		interrupted = l.Interrupted
		for _, t := range l.Targets {
			note(t.Target, t.Error)
		}
	}
	return interrupted, failed
}
