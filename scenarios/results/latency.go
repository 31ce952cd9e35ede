package results

import (
	"time"
)

// Latency is the spread of a target's answered requests' latencies.
type Latency struct {
	Count int64         `json:"count"`
	Min   time.Duration `json:"min_ns"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p99_9_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Bucket is one bar of a latency histogram: how many answers took up to
// UpTo (and more than the previous bucket's UpTo).
type Bucket struct {
	UpTo  time.Duration `json:"up_to_ns"`
	Count int64         `json:"count"`
}

// Second is one second of a load: what was answered in it (by the instant
// the answer came) and how fast.
type Second struct {
	// At counts seconds from the start of the load, from 0.
	At       int           `json:"at"`
	Answered int64         `json:"answered"`
	Errors   int64         `json:"errors"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Max      time.Duration `json:"max_ns"`
}

// ErrorCount is how many requests failed one way, and the first such
// failure in words.
type ErrorCount struct {
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
	First string `json:"first"`
}
