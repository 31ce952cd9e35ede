package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/racelab/racelab/targets/story"
)

// A subscriber's row in racelab_plans holds the plan, story.Paid or
// story.Cancelled, with the day's count of originals: a download reads both
// in one place. day is NULL until the first original.

// Subscribe starts subscriber's paid plan, keeping the day's count.
func (s *Store) Subscribe(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, story.Paid)
}

// Cancel ends subscriber's plan in the store. The naive strategy's cache
// is left as it is: the cancel is the payment provider's webhook, which
// reaches another server, so a read cached here goes on saying "paid"
// until it expires.
func (s *Store) Cancel(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, story.Cancelled)
}

func (s *Store) setPlan(ctx context.Context, subscriber, state string) error {
	_, err := s.db().Exec(ctx, `
		INSERT INTO racelab_plans (subscriber, plan) VALUES ($1, $2)
		ON CONFLICT (subscriber) DO UPDATE SET plan = EXCLUDED.plan`, subscriber, state)
	if err != nil {
		return fmt.Errorf("plan %q: %w", subscriber, err)
	}
	return nil
}

// Paid reads the plan as a page does: through the naive strategy's cache,
// from the table on the others.
func (s *Store) Paid(ctx context.Context, subscriber string) (bool, error) {
	paid, err := s.base.Plans.Read(ctx, subscriber, func(ctx context.Context) (bool, error) {
		var state string
		err := s.db().QueryRow(ctx, `SELECT plan FROM racelab_plans WHERE subscriber = $1`, subscriber).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return state == story.Paid, err
	})
	if err != nil {
		return false, fmt.Errorf("plan %q: %w", subscriber, err)
	}
	return paid, nil
}

// Download grants an original when the plan is paid and the day's count
// is under limit, and counts it: one UPDATE whose WHERE reads the plan and
// the count (atomic); the row read, decided in Go and written in a
// transaction (for-update, serializable); or the plan read through the
// cache, then the count read, decided in Go and written (naive).
func (s *Store) Download(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	granted, count, err := s.download(ctx, subscriber, limit)
	if err != nil {
		return false, 0, fmt.Errorf("download %q: %w", subscriber, err)
	}
	return granted, count, nil
}

func (s *Store) download(ctx context.Context, subscriber string, limit int64) (granted bool, count int64, err error) {
	day := s.day()
	switch s.base.Config.Strategy {
	case StrategyAtomic:
		err = s.db().QueryRow(ctx, `
			UPDATE racelab_plans AS p
			SET count = CASE WHEN p.day = $2::date THEN p.count + 1 ELSE 1 END, day = $2::date
			WHERE p.subscriber = $1 AND p.plan = 'paid'
				AND (p.day IS DISTINCT FROM $2::date OR p.count < $3)
			RETURNING count`, subscriber, day, limit).Scan(&count)
		if errors.Is(err, pgx.ErrNoRows) { // the plan or the limit refused it
			count, err = s.refusedCount(ctx, subscriber, day)
			return false, count, err
		}
		return err == nil, count, err
	case StrategyNaive:
		paid, err := s.Paid(ctx, subscriber)
		if err != nil || !paid {
			return false, 0, err
		}
	}
	// The row exists from the subscription on: without one there is no
	// plan, and FOR UPDATE has a row to lock whenever there is.
	err = s.readThenWrite(ctx, func(q querier, lock string) error {
		granted, count = false, 0
		var state, rowDay string
		var n int64
		err := q.QueryRow(ctx, `SELECT plan, coalesce(day::text, ''), count FROM racelab_plans WHERE subscriber = $1`+lock,
			subscriber).Scan(&state, &rowDay, &n)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		// The naive strategy read the plan through its cache already; the
		// others decide on the plan they read with the count.
		if s.base.Config.Strategy != StrategyNaive && state != story.Paid {
			return nil
		}
		if rowDay != day {
			n = 0
		}
		if n >= limit {
			count = n
			return nil
		}
		granted, count = true, n+1
		s.pause(ctx)
		_, err = q.Exec(ctx, `UPDATE racelab_plans SET day = $2::date, count = $3 WHERE subscriber = $1`, subscriber, day, count)
		return err
	})
	return granted, count, err
}

// refusedCount is the count a refused download answers with: 0 when the
// plan refused it, the day's count when the limit did.
func (s *Store) refusedCount(ctx context.Context, subscriber, day string) (int64, error) {
	return readInt(ctx, s.db(), `
		SELECT CASE WHEN plan = 'paid' AND day = $2::date THEN count ELSE 0 END
		FROM racelab_plans WHERE subscriber = $1`, subscriber, day)
}

// Downloads reads the subscriber's count of originals today.
func (s *Store) Downloads(ctx context.Context, subscriber string) (int64, error) {
	n, err := readInt(ctx, s.db(), `SELECT count FROM racelab_plans WHERE subscriber = $1 AND day = $2::date`, subscriber, s.day())
	if err != nil {
		return 0, fmt.Errorf("downloads %q: %w", subscriber, err)
	}
	return n, nil
}
