package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/racelab/racelab/targets/internal/server"
)

// tables are the store's tables with the column each keys its rows by.
var tables = []struct{ name, key string }{
	{"racelab_views", "slug"},
	{"racelab_quota", "visitor"},
	{"racelab_items", "item"},
	{"racelab_limits", "caller"},
	{"racelab_plans", "subscriber"},
}

// Clean deletes every row the stories keep for key (targets.Cleaner), in
// one round trip: the engine calls it once a trial's key has been read
// back, so that racelab_views and the others do not grow run after run.
func (s *Store) Clean(ctx context.Context, key string) error {
	var b pgx.Batch
	for _, t := range tables {
		b.Queue(`DELETE FROM `+t.name+` WHERE `+t.key+` = $1`, key)
	}
	if err := s.db().SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("clean %q: %w", key, err)
	}
	return nil
}

// CleanScoped deletes the rows in scope of the store's tables on the
// server cfg names and answers how many it deleted, and how many it kept
// because they were written more recently than scope.Idle (the touched
// column).
func CleanScoped(ctx context.Context, cfg Config, scope server.CleanScope) (removed, kept int64, err error) {
	s, err := Open(ctx, cfg)
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	idle := scope.Idle.Seconds()
	for _, t := range tables {
		in := `strpos(` + t.key + `, $1) > 0 AND starts_with(` + t.key + `, $2)`
		del, args := `DELETE FROM `+t.name+` WHERE `+in, []any{scope.Within, scope.Prefix}
		if idle > 0 {
			del, args = del+` AND touched < now() - make_interval(secs => $3)`, append(args, idle)
		}
		tag, err := s.db().Exec(ctx, del, args...)
		if err != nil {
			return removed, kept, fmt.Errorf("clean %s: %w", t.name, err)
		}
		removed += tag.RowsAffected()
		if idle > 0 {
			var n int64
			if err := s.db().QueryRow(ctx, `SELECT count(*) FROM `+t.name+` WHERE `+in, scope.Within, scope.Prefix).Scan(&n); err != nil {
				return removed, kept, fmt.Errorf("clean %s: %w", t.name, err)
			}
			kept += n
		}
	}
	return removed, kept, nil
}
