package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Hit records one view of slug and answers the total it stored.
func (s *Store) Hit(ctx context.Context, slug string) (int64, error) {
	total, err := s.hit(ctx, slug)
	if err != nil {
		return 0, fmt.Errorf("hit %q: %w", slug, err)
	}
	return total, nil
}

func (s *Store) hit(ctx context.Context, slug string) (int64, error) {
	var total int64
	if s.base.Config.Strategy == StrategyAtomic {
		err := s.db().QueryRow(ctx, `
			INSERT INTO racelab_views (slug, count) VALUES ($1, 1)
			ON CONFLICT (slug) DO UPDATE SET count = racelab_views.count + 1
			RETURNING count`, slug).Scan(&total)
		return total, err
	}
	if s.base.Config.Strategy == StrategyForUpdate {
		// FOR UPDATE locks rows, not their absence: the row must exist
		// before the first request reads it.
		if err := s.ensure(ctx, `INSERT INTO racelab_views (slug, count) VALUES ($1, 0)
			ON CONFLICT (slug) DO NOTHING`, slug); err != nil {
			return 0, err
		}
	}
	err := s.readThenWrite(ctx, func(q querier, lock string) error {
		n, err := readInt(ctx, q, `SELECT count FROM racelab_views WHERE slug = $1`+lock, slug)
		if err != nil {
			return err
		}
		total = n + 1
		s.pause(ctx)
		_, err = q.Exec(ctx, `
			INSERT INTO racelab_views (slug, count) VALUES ($1, $2)
			ON CONFLICT (slug) DO UPDATE SET count = EXCLUDED.count`, slug, total)
		return err
	})
	return total, err
}

// Views reads the total stored for slug, 0 if it has none.
func (s *Store) Views(ctx context.Context, slug string) (int64, error) {
	return s.readBack(ctx, "views", slug, `SELECT count FROM racelab_views WHERE slug = $1`)
}

// Consume asks for one download for visitor and answers whether it was
// granted and the count the store answered with. A refused download is not
// counted. The row holds the day with the count, and a count from another
// day counts as 0, so the day rolls over by itself.
func (s *Store) Consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error) {
	granted, count, err = s.consume(ctx, visitor, limit)
	if err != nil {
		return false, 0, fmt.Errorf("consume %q: %w", visitor, err)
	}
	return granted, count, nil
}

func (s *Store) consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error) {
	day := s.day()
	if s.base.Config.Strategy == StrategyAtomic {
		if limit < 1 { // the upsert below would insert a first download
			count, err = s.count(ctx, visitor, day)
			return false, count, err
		}
		err = s.db().QueryRow(ctx, `
			INSERT INTO racelab_quota AS q (visitor, day, count) VALUES ($1, $2::date, 1)
			ON CONFLICT (visitor) DO UPDATE
				SET day = EXCLUDED.day,
				    count = CASE WHEN q.day = EXCLUDED.day THEN q.count + 1 ELSE 1 END
				WHERE q.day <> EXCLUDED.day OR q.count < $3
			RETURNING count`, visitor, day, limit).Scan(&count)
		if errors.Is(err, pgx.ErrNoRows) { // the WHERE refused it
			count, err = s.count(ctx, visitor, day)
			return false, count, err
		}
		return err == nil, count, err
	}
	if s.base.Config.Strategy == StrategyForUpdate {
		if err := s.ensure(ctx, `INSERT INTO racelab_quota (visitor, day, count) VALUES ($1, $2::date, 0)
			ON CONFLICT (visitor) DO NOTHING`, visitor, day); err != nil {
			return false, 0, err
		}
	}
	err = s.readThenWrite(ctx, func(q querier, lock string) error {
		var rowDay string
		var n int64
		err := q.QueryRow(ctx, `SELECT day::text, count FROM racelab_quota WHERE visitor = $1`+lock, visitor).Scan(&rowDay, &n)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if rowDay != day {
			n = 0
		}
		if n >= limit {
			granted, count = false, n
			return nil
		}
		granted, count = true, n+1
		s.pause(ctx)
		_, err = q.Exec(ctx, `
			INSERT INTO racelab_quota (visitor, day, count) VALUES ($1, $2::date, $3)
			ON CONFLICT (visitor) DO UPDATE SET day = EXCLUDED.day, count = EXCLUDED.count`,
			visitor, day, count)
		return err
	})
	return granted, count, err
}

// Count reads the visitor's count for today.
func (s *Store) Count(ctx context.Context, visitor string) (int64, error) {
	n, err := s.count(ctx, visitor, s.day())
	if err != nil {
		return 0, fmt.Errorf("count %q: %w", visitor, err)
	}
	return n, nil
}

func (s *Store) count(ctx context.Context, visitor, day string) (int64, error) {
	return readInt(ctx, s.db(), `SELECT count FROM racelab_quota WHERE visitor = $1 AND day = $2::date`, visitor, day)
}

// day is the store's UTC day as PostgreSQL writes a date.
func (s *Store) day() string { return s.base.Config.Now().UTC().Format(time.DateOnly) }

// Checkout tries to claim item for buyer and answers whether this request
// got it. Every item has a stock of one: an item without a row has never
// been claimed, and its first claim writes the row.
func (s *Store) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	return s.CheckoutOf(ctx, item, buyer, 1)
}

// CheckoutOf claims one of stock copies of item for buyer: remaining
// starts at the stock with the item's first claim and is decremented only
// while above zero.
func (s *Store) CheckoutOf(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	won, err := s.checkout(ctx, item, buyer, stock)
	if err != nil {
		return false, fmt.Errorf("checkout %q: %w", item, err)
	}
	return won, nil
}

func (s *Store) checkout(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	if s.base.Config.Strategy == StrategyAtomic {
		tag, err := s.db().Exec(ctx, `
			INSERT INTO racelab_items AS i (item, remaining, claims, buyer) VALUES ($1, $3 - 1, 1, $2)
			ON CONFLICT (item) DO UPDATE
				SET remaining = i.remaining - 1, claims = i.claims + 1, buyer = EXCLUDED.buyer
				WHERE i.remaining > 0`, item, buyer, stock)
		return tag.RowsAffected() == 1, err
	}
	if s.base.Config.Strategy == StrategyForUpdate {
		if err := s.ensure(ctx, `INSERT INTO racelab_items (item, remaining) VALUES ($1, $2)
			ON CONFLICT (item) DO NOTHING`, item, stock); err != nil {
			return false, err
		}
	}
	var won bool
	err := s.readThenWrite(ctx, func(q querier, lock string) error {
		remaining := stock // the stock of an item without a row
		err := q.QueryRow(ctx, `SELECT remaining FROM racelab_items WHERE item = $1`+lock, item).Scan(&remaining)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		won = remaining > 0
		if !won {
			return nil
		}
		s.pause(ctx)
		_, err = q.Exec(ctx, `
			INSERT INTO racelab_items AS i (item, remaining, claims, buyer) VALUES ($1, $2, 1, $3)
			ON CONFLICT (item) DO UPDATE
				SET remaining = EXCLUDED.remaining, claims = i.claims + 1, buyer = EXCLUDED.buyer`,
			item, remaining-1, buyer)
		return err
	})
	return won, err
}

// Claims reads how many claims the store recorded on item.
func (s *Store) Claims(ctx context.Context, item string) (int64, error) {
	return s.readBack(ctx, "claims", item, `SELECT claims FROM racelab_items WHERE item = $1`)
}

// readBack is a story's read-back of one integer of key's row, 0 when there
// is no row, its error told as what failed on which key.
func (s *Store) readBack(ctx context.Context, what, key, sql string) (int64, error) {
	n, err := readInt(ctx, s.db(), sql, key)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", what, key, err)
	}
	return n, nil
}

// readInt runs a query for one integer through q, answering 0 when there
// is no row.
func readInt(ctx context.Context, q querier, sql string, args ...any) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, sql, args...).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// ensure runs a statement that creates a row when it is missing.
func (s *Store) ensure(ctx context.Context, sql string, args ...any) error {
	_, err := s.db().Exec(ctx, sql, args...)
	return err
}
