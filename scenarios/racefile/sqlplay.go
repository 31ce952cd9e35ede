package racefile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/scenarios/racefile/sqlrace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/sqldb"
)

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
		r, err := p.begin(ctx, st, i)
		if err != nil {
			st.keep(i, results.RaceAnswer{Kind: p.f.kindOf(i).Kind})
			return engine.Answer{Outcome: results.Errored, Err: err}
		}
		r.Alone(ctx)
		a, ra := p.txAnswer(r)
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

// begin begins transaction i of the trial on a connection of its own.
func (p *player) begin(ctx context.Context, st *trialState, i int) (*sqlrace.Run, error) {
	vars := map[string]any{"key": st.vars.Key, "i": int64(i), "trial": int64(st.vars.Trial)}
	for name, v := range st.vars.Captures {
		vars[name] = v
	}
	end := "commit"
	for _, o := range p.f.Order {
		if o.Tx == i && o.End != "" {
			end = o.End
		}
	}
	return sqlrace.Begin(ctx, p.db, i, p.f.kindOf(i).Tx.def(), vars, end)
}

// txAnswer is the transaction's outcome by its allowed: and refused:,
// and its answer as the rule reads it.
func (p *player) txAnswer(r *sqlrace.Run) (engine.Answer, results.RaceAnswer) {
	s := p.f.kindOf(r.I)
	ans, failed := r.Result()
	body, _ := json.Marshal(ans)
	ra := results.RaceAnswer{Kind: s.Kind, Body: string(body)}
	a := engine.Answer{Outcome: results.Errored}
	if ans.Error {
		a.Err = fmt.Errorf("transaction %d (%s): %w", r.I, s.Kind, failed)
		return a, ra
	}
	vars := map[string]any{"committed": ans.Committed, "aborted": ans.Aborted, "error": false, "retries": int64(ans.Retries)}
	ok, err := s.Allowed.Bool(vars)
	if err != nil {
		a.Err = fmt.Errorf("transaction %d: allowed: %w", r.I, err)
		return a, ra
	}
	if ok {
		a.Outcome = results.Allowed
		return a, ra
	}
	no, err := s.Refused.Bool(vars)
	switch {
	case err != nil:
		a.Err = fmt.Errorf("transaction %d: refused: %w", r.I, err)
	case no:
		a.Outcome = results.Refused
	default:
		a.Err = fmt.Errorf("transaction %d %s: neither allowed (%s) nor refused (%s)", r.I, ans.State(), s.Allowed.Src, s.Refused.Src)
	}
	return a, ra
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
	runs := make([]*sqlrace.Run, n)
	for j := range runs {
		r, err := p.begin(ctx, st, lo+j)
		if err != nil {
			for _, r := range runs[:j] {
				r.End()
			}
			return nil, err
		}
		runs[j] = r
	}
	released := sqlrace.Release(runs, p.f.Order)
	fs := make([]func(context.Context) engine.Answer, n)
	for j, r := range runs {
		fs[j] = func(ctx context.Context) engine.Answer {
			released[j](ctx)
			a, ra := p.txAnswer(r)
			st.answers[j] = ra
			return a
		}
	}
	return fs, nil
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
		return fmt.Errorf("sql %s: %w", sqlrace.FirstLine(s.SQL.Query), err)
	}
	rows, err := p.db.Write(ctx, s.SQL.Query, args)
	if err != nil {
		return fmt.Errorf("sql %s: %w", sqlrace.FirstLine(s.SQL.Query), err)
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
