package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/racelab/racelab/targets/story"
)

// Admit counts one request of caller against w: one statement (atomic),
// or a read, a decision in Go and a write (naive, for-update,
// serializable). Each request first drops the caller's expired windows:
// a table has no expiry of its own.
func (s *Store) Admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	a, err := s.admit(ctx, caller, w)
	if err != nil {
		return story.Admission{}, fmt.Errorf("admit %q: %w", caller, err)
	}
	return a, nil
}

func (s *Store) admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	now := s.base.Config.Now()
	n := w.Number(now)
	a := story.Admission{Window: n}
	expires := time.Unix(0, (n+1)*int64(w.Length)).Add(w.Expiry())
	if err := s.ensure(ctx, `DELETE FROM racelab_limits WHERE caller = $1 AND expires <= $2`, caller, now); err != nil {
		return a, err
	}
	const count = `SELECT count FROM racelab_limits WHERE caller = $1 AND win = $2`
	switch s.base.Config.Strategy {
	case StrategyAtomic:
		err := s.db().QueryRow(ctx, `
			INSERT INTO racelab_limits AS l (caller, win, count, expires) VALUES ($1, $2, 1, $4)
			ON CONFLICT (caller, win) DO UPDATE SET count = l.count + 1
				WHERE l.count < $3
			RETURNING count`, caller, n, w.Limit, expires).Scan(&a.Count)
		a.Allowed = err == nil
		if errors.Is(err, pgx.ErrNoRows) { // the WHERE refused it
			a.Count, err = readInt(ctx, s.db(), count, caller, n)
		}
		return a, err
	case StrategyForUpdate:
		if err := s.ensure(ctx, `INSERT INTO racelab_limits (caller, win, count, expires) VALUES ($1, $2, 0, $3)
			ON CONFLICT (caller, win) DO NOTHING`, caller, n, expires); err != nil {
			return a, err
		}
	}
	err := s.readThenWrite(ctx, func(q querier, lock string) error {
		c, err := readInt(ctx, q, count+lock, caller, n)
		if err != nil {
			return err
		}
		if c >= w.Limit {
			a.Allowed, a.Count = false, c
			return nil
		}
		a.Allowed, a.Count = true, c+1
		s.pause(ctx)
		_, err = q.Exec(ctx, `
			INSERT INTO racelab_limits (caller, win, count, expires) VALUES ($1, $2, $3, $4)
			ON CONFLICT (caller, win) DO UPDATE SET count = EXCLUDED.count`, caller, n, a.Count, expires)
		return err
	})
	return a, err
}

// Admitted reads caller's count in window n.
func (s *Store) Admitted(ctx context.Context, caller string, _ story.Window, n int64) (int64, error) {
	c, err := readInt(ctx, s.db(), `SELECT count FROM racelab_limits WHERE caller = $1 AND win = $2`, caller, n)
	if err != nil {
		return 0, fmt.Errorf("admitted %q: %w", caller, err)
	}
	return c, nil
}

// Records counts caller's window rows; expired ones stay until the
// caller's next request deletes them.
func (s *Store) Records(ctx context.Context, caller string, _ story.Window) (int64, error) {
	c, err := readInt(ctx, s.db(), `SELECT count(*) FROM racelab_limits WHERE caller = $1`, caller)
	if err != nil {
		return 0, fmt.Errorf("records %q: %w", caller, err)
	}
	return c, nil
}
