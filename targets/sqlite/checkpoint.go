package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// DefaultCheckpointEvery is how often a store copies its write-ahead log into
// the database and starts the log over. SQLite's own checkpoint after a
// commit did not keep up under serve: its WAL grew to 84 MB after 20,000
// hits and 133 MB after 80,000, never shrinking. A checkpoint of its own,
// on a connection of its own, keeps the log to about a second of writes.
const DefaultCheckpointEvery = time.Second

// checkpointBusy is how long the checkpointer waits for readers and
// writers to step aside before it tries again at its next tick: short, so
// that a burst's writes are never held up for long behind it.
const checkpointBusy = 20 * time.Millisecond

// walLimit is the size SQLite truncates the log file to once it starts
// over (journal_size_limit), should a checkpoint not truncate it itself.
const walLimit = 4 << 20

// checkpointer runs a TRUNCATE checkpoint every period until stop is
// closed, then closes db and done.
func checkpointer(db *sql.DB, every time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	defer db.Close()
	clock.Every(every, stop, func() {
		// A busy answer is no failure: the log is checkpointed as far as
		// it can be, and the next tick tries again.
		ctx, cancel := context.WithTimeout(context.Background(), every)
		_, _ = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		cancel()
	})
}
