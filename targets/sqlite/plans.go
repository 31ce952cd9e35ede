package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/racelab/racelab/targets/story"
)

// The subscription story's statements. A subscriber's row holds the plan
// with the day's count of originals, so that one statement can read both.
const (
	// setPlanSQL starts or ends a plan, keeping the day's count.
	setPlanSQL = `INSERT INTO racelab_plans (subscriber, plan) VALUES (?1, ?2)
		ON CONFLICT (subscriber) DO UPDATE SET plan = excluded.plan`
	planSQL = `SELECT plan FROM racelab_plans WHERE subscriber = ?1`
	// downloadSQL counts an original when the plan is paid and the day's
	// count is under the limit, starting a new day at 1, in one statement
	// under the write lock: a cancel is either before it, and refuses it,
	// or after it. Otherwise no row comes back.
	downloadSQL = `UPDATE racelab_plans
		SET count = CASE WHEN day = ?2 THEN count + 1 ELSE 1 END, day = ?2
		WHERE subscriber = ?1 AND plan = 'paid' AND (day <> ?2 OR count < ?3)
		RETURNING count`
	// refusedSQL is the count a refused download answers with: 0 when the
	// plan refused it, the day's count when the limit did.
	refusedSQL = `SELECT CASE WHEN plan = 'paid' AND day = ?2 THEN count ELSE 0 END
		FROM racelab_plans WHERE subscriber = ?1`
	downloadsSQL    = `SELECT count FROM racelab_plans WHERE subscriber = ?1 AND day = ?2`
	putDownloadsSQL = `UPDATE racelab_plans SET day = ?2, count = ?3 WHERE subscriber = ?1`
)

// Subscribe starts subscriber's paid plan.
func (s *Store) Subscribe(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, story.Paid)
}

// Cancel ends subscriber's plan in the database. The naive strategy's
// cache is left as it is: the cancel is the payment provider's webhook,
// which reaches another server, so a read cached here goes on saying
// "paid" until it expires.
func (s *Store) Cancel(ctx context.Context, subscriber string) error {
	return s.setPlan(ctx, subscriber, story.Cancelled)
}

func (s *Store) setPlan(ctx context.Context, subscriber, state string) error {
	if _, err := s.db.ExecContext(ctx, setPlanSQL, subscriber, state); err != nil {
		return s.fail(fmt.Sprintf("plan of %q", subscriber), err)
	}
	return nil
}

// Paid reads the plan as a page does: through the naive strategy's cache,
// from the table on the atomic one.
func (s *Store) Paid(ctx context.Context, subscriber string) (bool, error) {
	paid, err := s.plans.Read(ctx, subscriber, func(ctx context.Context) (bool, error) {
		var state string
		err := s.db.QueryRowContext(ctx, planSQL, subscriber).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return state == story.Paid, err
	})
	if err != nil {
		return false, s.fail(fmt.Sprintf("plan of %q", subscriber), err)
	}
	return paid, nil
}

// Download grants an original when the plan is paid and the day's count
// is under limit, and counts it: one statement that reads the plan and
// the count together (atomic), or the plan read through the cache, then
// the count read, decided in Go and written (naive).
func (s *Store) Download(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	var granted bool
	var n int64
	var err error
	if s.naive {
		granted, n, err = s.downloadNaive(ctx, subscriber, limit)
	} else {
		day := s.today()
		err = s.db.QueryRowContext(ctx, downloadSQL, subscriber, day, limit).Scan(&n)
		granted = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			n, err = s.readInt(ctx, refusedSQL, subscriber, day)
		}
	}
	if err != nil {
		return false, 0, s.fail(fmt.Sprintf("download for %q", subscriber), err)
	}
	return granted, n, nil
}

func (s *Store) downloadNaive(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	paid, err := s.Paid(ctx, subscriber)
	if err != nil || !paid {
		return false, 0, err
	}
	return s.takeOneNaive(ctx, downloadsSQL, putDownloadsSQL, subscriber, limit)
}

// Downloads reads the subscriber's count of originals today.
func (s *Store) Downloads(ctx context.Context, subscriber string) (int64, error) {
	return s.readBack(ctx, fmt.Sprintf("downloads of %q", subscriber), downloadsSQL, subscriber, s.today())
}
