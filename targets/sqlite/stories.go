package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The atomic strategy's statements: each one reads, decides and writes
// under SQLite's write lock, so no other request can come in between.
const (
	// hitSQL counts a view and answers the new total.
	hitSQL = `INSERT INTO racelab_views (slug, count) VALUES (?1, 1)
		ON CONFLICT (slug) DO UPDATE SET count = count + 1
		RETURNING count`
	// consumeSQL counts a download if the visitor's stored day is over
	// (starting today at 1) or today's count is still under the limit.
	// Otherwise the WHERE leaves the row alone and no row comes back: the
	// download is refused and not counted. Every SET expression sees the
	// row as it was, so day can be compared and replaced at once.
	consumeSQL = `INSERT INTO racelab_quota (visitor, day, count) VALUES (?1, ?2, 1)
		ON CONFLICT (visitor) DO UPDATE
			SET count = CASE WHEN day = excluded.day THEN count + 1 ELSE 1 END,
			    day = excluded.day
			WHERE day <> excluded.day OR count < ?3
		RETURNING count`
	// checkoutSQL records a claim while claims are below the stock, and no
	// row comes back once the item is taken.
	checkoutSQL = `INSERT INTO racelab_items (item, stock, claims, buyer) VALUES (?1, ?3, 1, ?2)
		ON CONFLICT (item) DO UPDATE SET claims = claims + 1, buyer = excluded.buyer
			WHERE claims < stock
		RETURNING claims`
)

// Reads, shared by both strategies and by the naive strategy's first step.
const (
	viewsSQL  = `SELECT count FROM racelab_views WHERE slug = ?1`
	countSQL  = `SELECT count FROM racelab_quota WHERE visitor = ?1 AND day = ?2`
	claimsSQL = `SELECT claims FROM racelab_items WHERE item = ?1`
)

// The naive strategy's writes: each stores the value Go computed from an
// earlier read, whatever the row holds by now, as a put would.
const (
	putViewsSQL = `INSERT INTO racelab_views (slug, count) VALUES (?1, ?2)
		ON CONFLICT (slug) DO UPDATE SET count = excluded.count`
	putQuotaSQL = `INSERT INTO racelab_quota (visitor, day, count) VALUES (?1, ?2, ?3)
		ON CONFLICT (visitor) DO UPDATE SET day = excluded.day, count = excluded.count`
	putClaimsSQL = `INSERT INTO racelab_items (item, stock, claims, buyer) VALUES (?1, ?4, ?3, ?2)
		ON CONFLICT (item) DO UPDATE SET claims = excluded.claims, buyer = excluded.buyer`
)

// Hit records one view of slug and answers the total it stored.
func (s *Store) Hit(ctx context.Context, slug string) (int64, error) {
	var n int64
	var err error
	if s.naive {
		n, err = s.hitNaive(ctx, slug)
	} else {
		err = s.db.QueryRowContext(ctx, hitSQL, slug).Scan(&n)
	}
	if err != nil {
		return 0, s.fail(fmt.Sprintf("hit %q", slug), err)
	}
	return n, nil
}

func (s *Store) hitNaive(ctx context.Context, slug string) (int64, error) {
	n, err := s.readInt(ctx, viewsSQL, slug)
	if err != nil {
		return 0, err
	}
	if err := s.pause(ctx); err != nil {
		return 0, err
	}
	n++
	if _, err := s.db.ExecContext(ctx, putViewsSQL, slug, n); err != nil {
		return 0, err
	}
	return n, nil
}

// Views reads the total stored for slug, 0 if it has none.
func (s *Store) Views(ctx context.Context, slug string) (int64, error) {
	return s.readBack(ctx, fmt.Sprintf("views of %q", slug), viewsSQL, slug)
}

// Consume asks for one download for visitor. It is granted iff the
// visitor's count for today is below limit, and then counted; a refused
// download is not counted. The count answered is the visitor's count after
// the request.
func (s *Store) Consume(ctx context.Context, visitor string, limit int64) (bool, int64, error) {
	var granted bool
	var n int64
	var err error
	switch {
	case limit < 1:
		// Nothing can be granted; the upsert would count a first download
		// regardless, so it is not asked.
		n, err = s.readInt(ctx, countSQL, visitor, s.today())
	case s.naive:
		granted, n, err = s.consumeNaive(ctx, visitor, limit)
	default:
		granted, n, err = s.consumeAtomic(ctx, visitor, limit)
	}
	if err != nil {
		return false, 0, s.fail(fmt.Sprintf("consume for %q", visitor), err)
	}
	return granted, n, nil
}

func (s *Store) consumeAtomic(ctx context.Context, visitor string, limit int64) (bool, int64, error) {
	day := s.today()
	var n int64
	err := s.db.QueryRowContext(ctx, consumeSQL, visitor, day, limit).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		// Refused. The count to answer with takes a second statement; a row
		// that refuses cannot change again until the day does, so the
		// answer is the count that refused, unless midnight came between.
		n, err = s.readInt(ctx, countSQL, visitor, day)
		return false, n, err
	}
	return err == nil, n, err
}

func (s *Store) consumeNaive(ctx context.Context, visitor string, limit int64) (bool, int64, error) {
	return s.takeOneNaive(ctx, countSQL, putQuotaSQL, visitor, limit)
}

// takeOneNaive is a daily count the naive way: read the row's count for
// today with readSQL, decide in Go, pause, and write count+1 with
// writeSQL (key, day, count), two statements with nothing around them.
func (s *Store) takeOneNaive(ctx context.Context, readSQL, writeSQL, key string, limit int64) (bool, int64, error) {
	day := s.today()
	n, err := s.readInt(ctx, readSQL, key, day)
	if err != nil {
		return false, 0, err
	}
	if n >= limit {
		return false, n, nil
	}
	if err := s.pause(ctx); err != nil {
		return false, 0, err
	}
	n++
	if _, err := s.db.ExecContext(ctx, writeSQL, key, day, n); err != nil {
		return false, 0, err
	}
	return true, n, nil
}

// Count reads the visitor's count for today, 0 if the visitor has not
// downloaded anything since the day began.
func (s *Store) Count(ctx context.Context, visitor string) (int64, error) {
	return s.readBack(ctx, fmt.Sprintf("count for %q", visitor), countSQL, visitor, s.today())
}

// Checkout tries to claim item for buyer and answers whether this request
// got it: the first claim succeeds, later ones find the Stock of one gone.
func (s *Store) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	return s.CheckoutOf(ctx, item, buyer, Stock)
}

// CheckoutOf claims one of stock copies of item for buyer: the claim is
// recorded only while claims are below the stock the item's row was
// created with, so the stock never goes below zero.
func (s *Store) CheckoutOf(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	var ok bool
	var err error
	if s.naive {
		ok, err = s.checkoutNaive(ctx, item, buyer, stock)
	} else {
		var claims int64
		err = s.db.QueryRowContext(ctx, checkoutSQL, item, buyer, stock).Scan(&claims)
		ok = err == nil
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
	}
	if err != nil {
		return false, s.fail(fmt.Sprintf("checkout of %q", item), err)
	}
	return ok, nil
}

func (s *Store) checkoutNaive(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	claims, err := s.readInt(ctx, claimsSQL, item)
	if err != nil {
		return false, err
	}
	if claims >= stock {
		return false, nil
	}
	if err := s.pause(ctx); err != nil {
		return false, err
	}
	if _, err := s.db.ExecContext(ctx, putClaimsSQL, item, buyer, claims+1, stock); err != nil {
		return false, err
	}
	return true, nil
}

// Claims reads how many claims the store recorded on item.
func (s *Store) Claims(ctx context.Context, item string) (int64, error) {
	return s.readBack(ctx, fmt.Sprintf("claims on %q", item), claimsSQL, item)
}

// readBack is a story's read-back: readInt, its error told as what failed.
func (s *Store) readBack(ctx context.Context, what, query string, args ...any) (int64, error) {
	n, err := s.readInt(ctx, query, args...)
	if err != nil {
		return 0, s.fail(what, err)
	}
	return n, nil
}

// readInt runs a query for one integer, answering 0 when there is no row.
func (s *Store) readInt(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, query, args...).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// fail wraps a request's error with what the request was doing, and says
// ErrClosed rather than the driver's words when the store was closed.
func (s *Store) fail(what string, err error) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		err = ErrClosed
	}
	return fmt.Errorf("%s: %w", what, err)
}
