package story

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The ops a Step records; the package doc (Traces) says what each means.
const (
	OpRead       = "read"
	OpWrite      = "write"
	OpWriteLands = "write-lands"
	OpFetch      = "fetch"
	OpRefuse     = "refuse"
)

// NotFound is the Note, or the start of the Note, of a read that found no
// value: Value is then empty.
const NotFound = "not found"

// Step is one store operation made by a request.
type Step struct {
	// At is the instant on the store's clock when the operation took
	// effect: when a read answered, a write was issued or landed.
	At time.Time
	// Op is one of the Op constants.
	Op string
	// Key is the key the operation was on, as the store names it.
	Key string
	// Value is the value read or written, "" for none.
	Value string
	// Note says what else matters for the story, in a few words: where a
	// read came from and how stale it was, what a landing write replaced,
	// why a request was refused.
	Note string
}

// String renders the step without its instant, e.g.
// `read views:post = 41 (cache miss)`.
func (s Step) String() string {
	out := s.Op + " " + s.Key
	if s.Value != "" {
		out += " = " + s.Value
	}
	if s.Note != "" {
		out += " (" + s.Note + ")"
	}
	return out
}

// Recorder collects the steps of one request. It is safe for concurrent
// use: a request's steps may be added by whatever goroutine serves it.
// The zero value is ready to use.
type Recorder struct {
	mu    sync.Mutex
	steps []Step
}

// Add appends s.
func (r *Recorder) Add(s Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s)
}

// Steps returns a copy of the steps so far, in the order they were added.
func (r *Recorder) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Step(nil), r.steps...)
}

// Len is the number of steps so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.steps)
}

type recorderKey struct{}

// WithRecorder returns a copy of ctx whose store operations are recorded in r.
func WithRecorder(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// RecorderFrom returns the recorder ctx carries, or nil.
func RecorderFrom(ctx context.Context) *Recorder {
	r, _ := ctx.Value(recorderKey{}).(*Recorder)
	return r
}

// Tracing reports whether ctx carries a recorder: a store checks it before
// spending time on a Note.
func Tracing(ctx context.Context) bool { return RecorderFrom(ctx) != nil }

// Trace records s in ctx's recorder, if it has one.
func Trace(ctx context.Context, s Step) {
	if r := RecorderFrom(ctx); r != nil {
		r.Add(s)
	}
}

// FormatSteps renders steps one a line, each instant as the time since start:
// a plain timeline for tests and logs. Renderers that lay steps out in
// lanes read the Steps themselves.
func FormatSteps(start time.Time, steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "%10v  %s\n", s.At.Sub(start), s)
	}
	return b.String()
}
