package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
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

// CleanAll deletes every row of the store's tables on the server cfg
// names, what interrupted runs (and sharded runs, whose rows wait for
// verify) left behind, and answers how many it deleted; within, when not
// empty, limits it to rows whose key holds it (a test's own, on a server
// others use). The tables stay; rows of a run still going are deleted
// too: run it when none is.
func CleanAll(ctx context.Context, cfg Config, within string) (int64, error) {
	s, err := Open(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var removed int64
	for _, t := range tables {
		tag, err := s.db().Exec(ctx, `DELETE FROM `+t.name+` WHERE strpos(`+t.key+`, $1) > 0`, within)
		if err != nil {
			return removed, fmt.Errorf("clean %s: %w", t.name, err)
		}
		removed += tag.RowsAffected()
	}
	return removed, nil
}
