package sqlrace

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/targets/sqldb"
	"github.com/racelab/racelab/targets/story"
)

// BlockedAfter is how long a statement runs before racelab counts it as
// blocked on another transaction's lock: the barrier then goes on
// without it, and a fixed order takes its next step. A statement of a
// race is a handful of rows, so one still running after this waits on a
// lock, not on work; the wait only shapes the interleaving, never a
// verdict, which the database's own answers decide.
const BlockedAfter = 400 * time.Millisecond

// Event is one line of a transaction's timeline: what it did, when
// (from the burst's release), at which statement.
type Event struct {
	AtMS float64 `json:"at_ms"`
	// Step is the statement, from 1 as order: numbers them; 0 for the
	// transaction as a whole (its commit, rollback or retry).
	Step int `json:"step,omitempty"`
	// What is began, read, wrote, blocked, aborted, error, committed,
	// rolled back or retried.
	What string `json:"what"`
	SQL  string `json:"sql,omitempty"`
	Rows int    `json:"rows,omitempty"`
	// Value is what a read returned, its rows as JSON.
	Value string `json:"value,omitempty"`
	// Code is the database's code of an abort or an error (40001).
	Code string `json:"code,omitempty"`
}

// Answer is what a transaction of a SQL race came to, kept as its
// answer's body: the rule reads it as answers[i].body (committed,
// aborted, error, retries, and reads.NAME for each statement's rows by
// its as:), and explain shows its timeline.
type Answer struct {
	Committed bool           `json:"committed"`
	Aborted   bool           `json:"aborted"`
	Error     bool           `json:"error"`
	Code      string         `json:"code,omitempty"`
	Retries   int            `json:"retries"`
	Reads     map[string]any `json:"reads"`
	Timeline  []Event        `json:"timeline"`
}

// State says in a word how the transaction ended.
func (a *Answer) State() string {
	switch {
	case a.Committed:
		return "committed"
	case a.Aborted:
		return "aborted"
	}
	return "rolled back"
}

// Step is one step of a transaction: a statement, its rows named As for
// the steps after it, or a barrier every transaction reaches before any
// goes on.
type Step struct {
	Query string
	// Args are the statement's arguments, from the variables the
	// transaction has so far.
	Args    func(vars map[string]any) ([]any, error)
	As      string
	Barrier bool
}

// Tx is what a transaction runs: its steps, and how often an aborted run
// of it is tried again.
type Tx struct {
	Steps []Step
	Retry int
}

// statements are the steps that are not barriers: step N of an order is
// statements()[N-1].
func (t *Tx) statements() []Step {
	var out []Step
	for _, s := range t.Steps {
		if !s.Barrier {
			out = append(out, s)
		}
	}
	return out
}

// barriers counts the transaction's barriers.
func (t *Tx) barriers() int {
	n := 0
	for _, s := range t.Steps {
		if s.Barrier {
			n++
		}
	}
	return n
}

// Run is one transaction of a trial in flight.
type Run struct {
	// I is its number in the burst.
	I    int
	db   *sqldb.DB
	def  *Tx
	tx   *sqldb.Tx
	vars map[string]any
	// end is how it ends when every statement ran: commit, or rollback
	// when an order says so.
	end string

	mu       sync.Mutex
	t0       time.Time
	ans      Answer
	err      error // an error that is not the database's refusal
	finished bool  // aborted, failed or ended: no statement runs any more
	// running and blocked are the statement in flight, and whether it
	// has run past BlockedAfter.
	running, blocked bool
	// rec records its timeline as steps when the run is traced.
	rec *story.Recorder
}

// Begin begins transaction i on a connection of its own, its statements'
// arguments read from vars (which its reads then add to); end is "commit"
// or "rollback".
func Begin(ctx context.Context, db *sqldb.DB, i int, def *Tx, vars map[string]any, end string) (*Run, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("transaction %d: begin: %w", i, err)
	}
	r := &Run{I: i, db: db, def: def, tx: tx, vars: vars, end: end, t0: time.Now()}
	r.ans.Reads = map[string]any{}
	return r, nil
}

// Result is what the transaction came to, and the error that failed it
// when it failed on something other than the database's refusal.
func (r *Run) Result() (Answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ans, r.err
}

// trace records the timeline in the recorder ctx carries, if any (a
// traced run: explain).
func (r *Run) trace(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec = story.RecorderFrom(ctx)
}

// event adds a line to the timeline.
func (r *Run) event(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.eventLocked(e)
}

func (r *Run) eventLocked(e Event) {
	now := time.Now()
	e.AtMS = float64(now.Sub(r.t0).Microseconds()) / 1000
	r.ans.Timeline = append(r.ans.Timeline, e)
	if r.rec != nil {
		// A traced run (explain) draws it in the transaction's lane.
		st := story.Step{At: now, Op: e.What, Value: e.Value}
		switch e.What {
		case "read":
			st.Op = story.OpRead
		case "wrote":
			st.Op, st.Value = story.OpWrite, FirstLine(e.SQL)
		case "blocked":
			st.Note = FirstLine(e.SQL)
		case "aborted", "error":
			st.Note = e.Code
		}
		r.rec.Add(st)
	}
}

// FirstLine is a statement's first line, shortened, for a message.
func FirstLine(q string) string {
	q, _, _ = strings.Cut(strings.TrimSpace(q), "\n")
	return expr.Clip(q)
}

// watched runs one statement (or the commit) of the transaction: past
// BlockedAfter it is marked blocked and onBlocked(true) is told, so that
// the barrier or the order goes on without it; onBlocked(false) when it
// returns after that. Both are told under r.mu, so that the two never
// cross when the statement returns as the timer fires.
func (r *Run) watched(step int, sqlText string, onBlocked func(on bool), run func() error) error {
	r.mu.Lock()
	r.running, r.blocked = true, false
	r.mu.Unlock()
	timer := time.AfterFunc(BlockedAfter, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.running {
			return
		}
		r.blocked = true
		r.eventLocked(Event{Step: step, What: "blocked", SQL: sqlText})
		onBlocked(true)
	})
	err := run()
	timer.Stop()
	r.mu.Lock()
	if r.blocked {
		onBlocked(false)
	}
	r.running, r.blocked = false, false
	r.mu.Unlock()
	return err
}

// statement runs statement step (from 1) and keeps its rows under its
// as: name.
func (r *Run) statement(ctx context.Context, step int, st Step, onBlocked func(on bool)) error {
	args, err := st.Args(r.vars)
	if err != nil {
		return &argError{fmt.Errorf("statement %d: %w", step, err)}
	}
	var rows *sqldb.Rows
	err = r.watched(step, st.Query, onBlocked, func() error {
		var err error
		rows, err = r.tx.Query(ctx, st.Query, args)
		return err
	})
	if err != nil {
		return err
	}
	what := "wrote"
	if len(rows.Columns) > 0 {
		what = "read"
	}
	e := Event{Step: step, What: what, SQL: st.Query, Rows: len(rows.Rows)}
	if what == "read" {
		b, _ := json.Marshal(rows.Rows)
		e.Value = expr.Clip(string(b))
	}
	r.event(e)
	if st.As != "" {
		// Through JSON, so that the values are the types a rule sees in
		// a readback (whole numbers int64, text string).
		b, err := json.Marshal(map[string]any{"rows": rows.Rows, "count": len(rows.Rows)})
		if err != nil {
			return &argError{fmt.Errorf("statement %d: %w", step, err)}
		}
		v, _ := expr.DecodeJSON(b)
		r.vars[st.As] = v
		r.mu.Lock()
		r.ans.Reads[st.As] = v
		r.mu.Unlock()
	}
	return nil
}

// argError is a failure of racelab's side of a statement (an argument
// that does not evaluate): an error, never the database's refusal.
type argError struct{ err error }

func (e *argError) Error() string { return e.err.Error() }
func (e *argError) Unwrap() error { return e.err }

// finish ends the transaction as the database ended it: committed,
// aborted (its own refusal, retried when Retry allows), or failed.
// It reports whether the transaction is to be tried again.
func (r *Run) finish(err error, what string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.finished = true
		r.ans.Committed = what == "commit"
		r.eventLocked(Event{What: map[string]string{"commit": "committed", "rollback": "rolled back"}[what]})
		return false
	}
	class, code := sqldb.Classify(err)
	if _, ours := err.(*argError); ours {
		class = sqldb.Failed
	}
	if class == sqldb.Refused {
		r.eventLocked(Event{What: "aborted", Code: code})
		if r.ans.Retries < r.def.Retry {
			return true
		}
		r.finished, r.ans.Aborted, r.ans.Code = true, true, code
		return false
	}
	r.eventLocked(Event{What: "error", Code: code})
	r.finished, r.ans.Error, r.ans.Code, r.err = true, true, code, err
	return false
}

// end commits the transaction, or rolls it back.
func (r *Run) commit(how string, onBlocked func(on bool)) error {
	return r.watched(0, "", onBlocked, func() error {
		if how == "rollback" {
			return r.tx.Rollback()
		}
		return r.tx.Commit()
	})
}

// run runs the transaction through its steps, waiting at each barrier,
// then commits; an aborted one is tried again as Retry allows, on a new
// transaction, past the barriers the others have left.
func (r *Run) run(ctx context.Context, b *barriers) {
	defer b.done(r.I)
	onBlocked := func(on bool) { b.blocked(r.I, on) }
	for {
		err := r.steps(ctx, b, onBlocked)
		if err == nil {
			err = r.commit(r.end, onBlocked)
		}
		if !r.finish(err, r.end) {
			r.tx.End()
			return
		}
		r.tx.End()
		r.db.Retried()
		if err := wait(ctx, backoff(r.ans.Retries)); err != nil {
			r.finish(&argError{fmt.Errorf("retry: %w", err)}, "")
			return
		}
		tx, berr := r.db.Begin(ctx)
		r.mu.Lock()
		r.ans.Retries++
		r.eventLocked(Event{What: "retried"})
		r.mu.Unlock()
		if berr != nil {
			r.finish(&argError{fmt.Errorf("retry: begin: %w", berr)}, "")
			return
		}
		r.tx = tx
	}
}

// backoff is how long a refused transaction waits before its retry n
// (from 0): 1 ms doubled each time up to 64 ms, jittered by up to half,
// as an application's retry loop waits. Retried at once, a transaction
// SQLite refused while the winner still holds its lock (BUSY) is
// refused again, and retry: would run out before the winner commits.
func backoff(n int) time.Duration {
	d := time.Millisecond << min(n, 6)
	return d/2 + rand.N(d/2+1)
}

// wait waits d, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// steps runs the statements, waiting at the barriers.
func (r *Run) steps(ctx context.Context, b *barriers, onBlocked func(on bool)) error {
	n, k := 0, 0
	for _, st := range r.def.Steps {
		if st.Barrier {
			if err := b.arrive(ctx, r.I, k); err != nil {
				return err
			}
			k++
			continue
		}
		n++
		if err := r.statement(ctx, n, st, onBlocked); err != nil {
			return err
		}
	}
	return nil
}

// Alone runs one transaction by itself (a sequence with --gap): there is
// no one to wait for at its barriers.
func (r *Run) Alone(ctx context.Context) {
	r.run(ctx, newBarriers([]*Run{r}))
}

// End gives back a transaction that will not run: its connection returns
// to the pool.
func (r *Run) End() { r.tx.End() }
