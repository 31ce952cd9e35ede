package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/racelab/racelab/targets/story"
)

// The rate limiter's statements.
const (
	// admitSQL counts a request in its window while the count is under
	// the limit, in one statement: the WHERE of the upsert refuses at the
	// limit, and no row comes back.
	admitSQL = `INSERT INTO racelab_limits (caller, win, count, expires) VALUES (?1, ?2, 1, ?4)
		ON CONFLICT (caller, win) DO UPDATE SET count = count + 1
			WHERE count < ?3
		RETURNING count`
	// sweepSQL drops the caller's windows whose records have expired: a
	// table has no expiry of its own, so the limiter cleans up after
	// itself on each request.
	sweepSQL       = `DELETE FROM racelab_limits WHERE caller = ?1 AND expires <= ?2`
	windowCountSQL = `SELECT count FROM racelab_limits WHERE caller = ?1 AND win = ?2`
	putWindowSQL   = `INSERT INTO racelab_limits (caller, win, count, expires) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (caller, win) DO UPDATE SET count = excluded.count`
	recordsSQL = `SELECT count(*) FROM racelab_limits WHERE caller = ?1`
)

// Admit counts one request of caller against w. The atomic strategy is
// one upsert; the naive one reads the count, decides in Go and writes
// count+1, as the KV limiter did.
func (s *Store) Admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	now := s.now()
	n := w.Number(now)
	expires := (n+1)*int64(w.Length) + int64(w.Expiry())
	a := story.Admission{Window: n}
	if _, err := s.db.ExecContext(ctx, sweepSQL, caller, now.UnixNano()); err != nil {
		return a, s.fail(fmt.Sprintf("admit for %q", caller), err)
	}
	var err error
	if s.naive {
		a.Count, err = s.readInt(ctx, windowCountSQL, caller, n)
		if err == nil && a.Count < w.Limit {
			if err = s.pause(ctx); err == nil {
				a.Count++
				a.Allowed = true
				_, err = s.db.ExecContext(ctx, putWindowSQL, caller, n, a.Count, expires)
			}
		}
	} else {
		err = s.db.QueryRowContext(ctx, admitSQL, caller, n, w.Limit, expires).Scan(&a.Count)
		a.Allowed = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			a.Count, err = s.readInt(ctx, windowCountSQL, caller, n)
		}
	}
	if err != nil {
		return story.Admission{}, s.fail(fmt.Sprintf("admit for %q", caller), err)
	}
	return a, nil
}

// Admitted reads the caller's count in window n.
func (s *Store) Admitted(ctx context.Context, caller string, _ story.Window, n int64) (int64, error) {
	return s.readBack(ctx, fmt.Sprintf("admitted for %q", caller), windowCountSQL, caller, n)
}

// Records counts the caller's window rows: expired ones stay until the
// caller's next request sweeps them.
func (s *Store) Records(ctx context.Context, caller string, _ story.Window) (int64, error) {
	return s.readBack(ctx, fmt.Sprintf("records for %q", caller), recordsSQL, caller)
}
