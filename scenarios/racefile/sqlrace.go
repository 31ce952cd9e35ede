package racefile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/scenarios/results"
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

// TxEvent is one line of a transaction's timeline: what it did, when
// (from the burst's release), at which statement.
type TxEvent struct {
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

// TxAnswer is what a transaction of a SQL race came to, kept as its
// answer's body: the rule reads it as answers[i].body (committed,
// aborted, error, retries, and reads.NAME for each statement's rows by
// its as:), and explain shows its timeline.
type TxAnswer struct {
	Committed bool           `json:"committed"`
	Aborted   bool           `json:"aborted"`
	Error     bool           `json:"error"`
	Code      string         `json:"code,omitempty"`
	Retries   int            `json:"retries"`
	Reads     map[string]any `json:"reads"`
	Timeline  []TxEvent      `json:"timeline"`
}

// bindSQL is the player of a SQL race on its target database: the
// setup's statements, the transactions released together (a barrier or
// a fixed order), the readback, then the cleanup.
func (p *player) bindSQL() engine.Player {
	pl := p.bind()
	pl.Stage = p.stageTx
	pl.Do = func(ctx context.Context, key string, i int) engine.Answer {
		// One transaction alone (a sequence with --gap): no one to wait
		// for at its barriers.
		st := p.state(key)
		r, err := p.begin(ctx, st, i, time.Now())
		if err != nil {
			st.keep(i, results.RaceAnswer{Kind: p.f.kindOf(i).Kind})
			return engine.Answer{Outcome: results.Errored, Err: err}
		}
		p.runTx(ctx, r, newBarriers([]*txRun{r}))
		a, ra := r.answer()
		st.keep(i, ra)
		return a
	}
	pl.ReadTrial = func(ctx context.Context, key string, _ []results.Request) (int64, error) {
		n, err := p.read(ctx, key)
		p.cleanup(ctx, key)
		return n, err
	}
	pl.Read = func(ctx context.Context, key string) (int64, error) { return pl.ReadTrial(ctx, key, nil) }
	pl.Part, pl.Rejoin = nil, nil
	return pl
}

// txRun is one transaction of a trial in flight.
type txRun struct {
	p    *player
	i    int
	s    *Step
	tx   *sqldb.Tx
	vars map[string]any
	t0   time.Time
	// end is how it ends when every statement ran: commit, or rollback
	// when order: says so.
	end string

	mu       sync.Mutex
	ans      TxAnswer
	err      error // an error that is not the database's refusal
	finished bool  // aborted, failed or ended: no statement runs any more
	// running and blocked are the statement in flight, and whether it
	// has run past BlockedAfter.
	running, blocked bool
	// rec records its timeline as steps when the run is traced.
	rec *story.Recorder
}

// begin begins transaction i of the trial on a connection of its own.
func (p *player) begin(ctx context.Context, st *trialState, i int, t0 time.Time) (*txRun, error) {
	tx, err := p.db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("transaction %d: begin: %w", i, err)
	}
	vars := map[string]any{"key": st.vars.Key, "i": int64(i), "trial": int64(st.vars.Trial)}
	for name, v := range st.vars.Captures {
		vars[name] = v
	}
	r := &txRun{p: p, i: i, s: p.f.kindOf(i), tx: tx, vars: vars, t0: t0, end: "commit"}
	r.ans.Reads = map[string]any{}
	for _, o := range p.f.Order {
		if o.Tx == i && o.End != "" {
			r.end = o.End
		}
	}
	return r, nil
}

// event adds a line to the timeline.
func (r *txRun) event(e TxEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.eventLocked(e)
}

func (r *txRun) eventLocked(e TxEvent) {
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
			st.Op, st.Value = story.OpWrite, firstLine(e.SQL)
		case "blocked":
			st.Note = firstLine(e.SQL)
		case "aborted", "error":
			st.Note = e.Code
		}
		r.rec.Add(st)
	}
}

// watched runs one statement (or the commit) of the transaction: past
// BlockedAfter it is marked blocked and onBlocked(true) is told, so that
// the barrier or the order goes on without it; onBlocked(false) when it
// returns after that. Both are told under r.mu, so that the two never
// cross when the statement returns as the timer fires.
func (r *txRun) watched(step int, sqlText string, onBlocked func(on bool), run func() error) error {
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
		r.eventLocked(TxEvent{Step: step, What: "blocked", SQL: sqlText})
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
func (r *txRun) statement(ctx context.Context, step int, st *TxStep, onBlocked func(on bool)) error {
	args, err := st.SQL.args(r.vars)
	if err != nil {
		return &argError{fmt.Errorf("statement %d: %w", step, err)}
	}
	var rows *sqldb.Rows
	err = r.watched(step, st.SQL.Query, onBlocked, func() error {
		var err error
		rows, err = r.tx.Query(ctx, st.SQL.Query, args)
		return err
	})
	if err != nil {
		return err
	}
	what := "wrote"
	if len(rows.Columns) > 0 {
		what = "read"
	}
	e := TxEvent{Step: step, What: what, SQL: st.SQL.Query, Rows: len(rows.Rows)}
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
// aborted (its own refusal, retried when retry: allows), or failed.
// It reports whether the transaction is to be tried again.
func (r *txRun) finish(err error, what string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.finished = true
		r.ans.Committed = what == "commit"
		r.eventLocked(TxEvent{What: map[string]string{"commit": "committed", "rollback": "rolled back"}[what]})
		return false
	}
	class, code := sqldb.Classify(err)
	if _, ours := err.(*argError); ours {
		class = sqldb.Failed
	}
	if class == sqldb.Refused {
		r.eventLocked(TxEvent{What: "aborted", Code: code})
		if r.ans.Retries < r.s.Tx.Retry {
			return true
		}
		r.finished, r.ans.Aborted, r.ans.Code = true, true, code
		return false
	}
	r.eventLocked(TxEvent{What: "error", Code: code})
	r.finished, r.ans.Error, r.ans.Code, r.err = true, true, code, err
	return false
}

// runTx runs a transaction through its steps, waiting at each barrier,
// then commits; an aborted one is tried again as retry: allows, on a
// new transaction, past the barriers the others have left.
func (p *player) runTx(ctx context.Context, r *txRun, b *barriers) {
	defer b.done(r.i)
	for {
		err := r.steps(ctx, b)
		if err == nil {
			err = r.watched(0, "", func(on bool) { b.blocked(r.i, on) }, func() error {
				if r.end == "rollback" {
					return r.tx.Rollback()
				}
				return r.tx.Commit()
			})
		}
		if !r.finish(err, r.end) {
			r.tx.End()
			return
		}
		r.tx.End()
		p.db.Retried()
		tx, berr := p.db.Begin(ctx)
		r.mu.Lock()
		r.ans.Retries++
		r.eventLocked(TxEvent{What: "retried"})
		r.mu.Unlock()
		if berr != nil {
			r.finish(&argError{fmt.Errorf("retry: begin: %w", berr)}, "")
			return
		}
		r.tx = tx
	}
}

// steps runs the statements, waiting at the barriers.
func (r *txRun) steps(ctx context.Context, b *barriers) error {
	n, k := 0, 0
	for _, st := range r.s.Tx.Steps {
		if st.Barrier {
			if err := b.arrive(ctx, r.i, k); err != nil {
				return err
			}
			k++
			continue
		}
		n++
		if err := r.statement(ctx, n, st, func(on bool) { b.blocked(r.i, on) }); err != nil {
			return err
		}
	}
	return nil
}

// answer is the transaction's outcome by its allowed: and refused:, and
// its answer as the rule reads it.
func (r *txRun) answer() (engine.Answer, results.RaceAnswer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	body, _ := json.Marshal(r.ans)
	ra := results.RaceAnswer{Kind: r.s.Kind, Body: string(body)}
	a := engine.Answer{Outcome: results.Errored}
	if r.ans.Error {
		a.Err = fmt.Errorf("transaction %d (%s): %w", r.i, r.s.Kind, r.err)
		return a, ra
	}
	vars := map[string]any{"committed": r.ans.Committed, "aborted": r.ans.Aborted, "error": false, "retries": int64(r.ans.Retries)}
	ok, err := r.s.Allowed.Bool(vars)
	if err != nil {
		a.Err = fmt.Errorf("transaction %d: allowed: %w", r.i, err)
		return a, ra
	}
	if ok {
		a.Outcome = results.Allowed
		return a, ra
	}
	no, err := r.s.Refused.Bool(vars)
	switch {
	case err != nil:
		a.Err = fmt.Errorf("transaction %d: refused: %w", r.i, err)
	case no:
		a.Outcome = results.Refused
	default:
		a.Err = fmt.Errorf("transaction %d %s: neither allowed (%s) nor refused (%s)", r.i, r.state(), r.s.Allowed.Src, r.s.Refused.Src)
	}
	return a, ra
}

// state says in a word how the transaction ended.
func (r *txRun) state() string {
	switch {
	case r.ans.Committed:
		return "committed"
	case r.ans.Aborted:
		return "aborted"
	}
	return "rolled back"
}

// stageTx begins the burst's transactions, each on a connection of its
// own, before the release: what goes after it is their statements, so
// that they start together. With order:, the first released runs the
// order; each waits for its own transaction to end.
func (p *player) stageTx(ctx context.Context, key string, lo, n int) ([]func(context.Context) engine.Answer, error) {
	st := p.state(key)
	st.answers = make([]results.RaceAnswer, n)
	if p.f.Order != nil && (lo != 0 || n != p.f.Requests) {
		return nil, fmt.Errorf("order: replays %d transactions; the run asks for %d (leave -n out)", p.f.Requests, n)
	}
	runs := make([]*txRun, n)
	var t0 time.Time
	for j := range runs {
		r, err := p.begin(ctx, st, lo+j, t0)
		if err != nil {
			for _, r := range runs[:j] {
				r.tx.End()
			}
			return nil, err
		}
		runs[j] = r
	}
	b := newBarriers(runs)
	var start sync.Once
	ordered := make(chan struct{})
	var called sync.WaitGroup
	called.Add(n)
	release := func(ctx context.Context) {
		called.Done()
		if p.f.Order != nil {
			// Every transaction's lane is in place before the order
			// starts: a traced replay records each from its first step.
			called.Wait()
		}
		start.Do(func() {
			now := time.Now()
			for _, r := range runs {
				r.mu.Lock()
				r.t0 = now
				r.mu.Unlock()
			}
			if p.f.Order != nil {
				go func() {
					defer close(ordered)
					p.replay(ctx, runs)
				}()
			}
		})
	}
	fs := make([]func(context.Context) engine.Answer, n)
	for j, r := range runs {
		fs[j] = func(ctx context.Context) engine.Answer {
			r.mu.Lock()
			r.rec = story.RecorderFrom(ctx)
			r.mu.Unlock()
			release(ctx)
			if p.f.Order != nil {
				<-ordered
			} else {
				p.runTx(ctx, r, b)
			}
			a, ra := r.answer()
			st.answers[j] = ra
			return a
		}
	}
	return fs, nil
}

// replay runs order:, one step at a time: each goes to its
// transaction's own goroutine (its connection), and the next is taken
// when it is done or blocked. A blocked statement goes on when the lock
// is released; a deadlock is the database's to break.
func (p *player) replay(ctx context.Context, runs []*txRun) {
	type op struct {
		o    OrderStep
		done chan struct{}
	}
	queues := make([]chan op, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		queues[i] = make(chan op, len(p.f.Order))
		stmts := r.s.Tx.statements()
		wg.Go(func() {
			defer r.tx.End()
			for o := range queues[i] {
				r.mu.Lock()
				over := r.finished
				r.mu.Unlock()
				var once sync.Once
				signal := func() { once.Do(func() { close(o.done) }) }
				onBlocked := func(on bool) {
					if on {
						signal()
					}
				}
				switch {
				case over:
				case o.o.End != "":
					err := r.watched(0, "", onBlocked, func() error {
						if o.o.End == "rollback" {
							return r.tx.Rollback()
						}
						return r.tx.Commit()
					})
					r.finish(err, o.o.End)
				default:
					if err := r.statement(ctx, o.o.Step, stmts[o.o.Step-1], onBlocked); err != nil {
						r.finish(err, "")
					}
				}
				signal()
			}
		})
	}
	for _, o := range p.f.Order {
		x := op{o, make(chan struct{})}
		queues[o.Tx] <- x
		// Done, blocked, or still behind its transaction's blocked
		// statement: the order goes on either way.
		select {
		case <-x.done:
		case <-time.After(BlockedAfter + BlockedAfter/4):
		case <-ctx.Done():
		}
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
}

// barriers are the points (barrier: true) where the transactions wait
// for each other: barrier k is passed when every transaction has reached
// it, is blocked on a lock, has fewer barriers, or is over.
type barriers struct {
	mu       sync.Mutex
	reached  []int // barriers reached, by transaction
	has      []int // barriers it has
	blockedT []bool
	over     []bool
	open     []chan struct{}
}

func newBarriers(runs []*txRun) *barriers {
	b := &barriers{reached: make([]int, len(runs)), has: make([]int, len(runs)), blockedT: make([]bool, len(runs)), over: make([]bool, len(runs))}
	most := 0
	for j, r := range runs {
		for _, st := range r.s.Tx.Steps {
			if st.Barrier {
				b.has[j]++
			}
		}
		most = max(most, b.has[j])
	}
	for range most {
		b.open = append(b.open, make(chan struct{}))
	}
	return b
}

// index is transaction i's slot: its number in the burst, from the
// first of those staged together.
func (b *barriers) index(i int) int { return i % len(b.reached) }

// arrive waits at barrier k until it opens.
func (b *barriers) arrive(ctx context.Context, i, k int) error {
	b.mu.Lock()
	j := b.index(i)
	b.reached[j] = max(b.reached[j], k+1)
	b.check()
	ch := b.open[k]
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *barriers) blocked(i int, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blockedT[b.index(i)] = on
	b.check()
}

func (b *barriers) done(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.over[b.index(i)] = true
	b.check()
}

// check opens every barrier that may open now, in order; b.mu is held.
func (b *barriers) check() {
	for k, ch := range b.open {
		select {
		case <-ch:
			continue // open already
		default:
		}
		for j := range b.reached {
			if b.reached[j] <= k && k < b.has[j] && !b.blockedT[j] && !b.over[j] {
				return
			}
		}
		close(ch)
	}
}

// sqlSetup runs a setup statement on the target, outside any
// transaction; its rows are named by its as:, for what comes after.
func (p *player) sqlSetup(ctx context.Context, s *Step, st *trialState) error {
	vars := map[string]any{"key": st.vars.Key, "i": int64(-1), "trial": int64(st.vars.Trial)}
	for name, v := range st.vars.Captures {
		vars[name] = v
	}
	args, err := s.SQL.args(vars)
	if err != nil {
		return fmt.Errorf("sql %s: %w", firstLine(s.SQL.Query), err)
	}
	rows, err := p.db.Write(ctx, s.SQL.Query, args)
	if err != nil {
		return fmt.Errorf("sql %s: %w", firstLine(s.SQL.Query), err)
	}
	if s.As != "" {
		b, _ := json.Marshal(map[string]any{"rows": rows.Rows, "count": len(rows.Rows)})
		v, _ := expr.DecodeJSON(b)
		st.vars.Captures[s.As] = v
	}
	return nil
}

// cleanup runs cleanup: after the trial's readback: what it leaves is
// the trial's own key's rows, which no later trial reads. It is bounded
// by the run's timeout; a statement that fails leaves its rows, as an
// interrupted run does.
func (p *player) cleanup(ctx context.Context, key string) {
	p.mu.Lock()
	st := p.trials[key]
	p.mu.Unlock()
	if st == nil {
		return
	}
	for _, s := range p.f.Cleanup {
		if err := p.sqlSetup(ctx, s, st); err != nil {
			return
		}
	}
}

// firstLine is a statement's first line, shortened, for a message.
func firstLine(q string) string {
	q, _, _ = strings.Cut(strings.TrimSpace(q), "\n")
	return expr.Clip(q)
}

// sqlScenario makes sc play a SQL race: on a database target (a
// *sqldb.DB), its transactions rather than requests.
func (f *File) sqlScenario(sc *engine.Scenario, env map[string]string, dbs []dbFlag) {
	sc.Needs = "database: a SQL race plays on postgres://…, mysql://… and sqlite:PATH targets"
	sc.Story = strings.Replace(sc.Story, "The file declares no history model", "Each transaction runs on a connection of its own at the target's isolation level; the file declares no history model", 1)
	sc.Fix = "In a SQL race the database is the fix: at a level that prevents the anomaly it makes the second transaction " +
		"wait on the first's lock (blocked) or refuses it (aborted: PostgreSQL 40001/40P01, MySQL 1213/1205, SQLite BUSY), " +
		"and retry: runs a refused one again on what the first committed. A lock taken at the read (SELECT … FOR UPDATE) " +
		"or one atomic UPDATE fixes it at any level."
	sc.Unsplittable = "its transactions wait for each other at their barriers (or in their order), which one process alone can hold"
	sc.Rebind(func(engine.Binder) engine.Binder {
		return func(store any) (engine.Player, bool) {
			db, ok := store.(*sqldb.DB)
			if !ok {
				return engine.Player{}, false
			}
			p := &player{f: f, db: db, env: env, store: sync.OnceValue(func() storeTarget { return storeTargetOf(store, dbs) }), trials: map[string]*trialState{}}
			return p.bindSQL(), true
		}
	})
}
