package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestCheckpointTruncatesBesideAReader: the checkpoint is a TRUNCATE one.
// A PASSIVE, FULL or RESTART checkpoint copies the log into the database
// too, and journal_size_limit keeps the file under walLimit, so the
// bounded size TestWALStaysBounded checks cannot tell them apart; only
// TRUNCATE empties the file. It must do so while a reader keeps reading,
// as serve's reads go on between bursts: readers of a fully copied log
// read the database and let the checkpoint through.
func TestCheckpointTruncatesBesideAReader(t *testing.T) {
	const writers, hits = 4, 200
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s := open(t, Config{Path: path, CheckpointEvery: 20 * time.Millisecond}, writers+1)
	stop := make(chan struct{})
	var reads sync.WaitGroup
	var readErr error
	reads.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Views(t.Context(), "slug-0-0"); err != nil {
				readErr = err
				return
			}
		}
	})
	hitFromWriters(t, s, writers, hits, 10)
	wal := path + "-wal"
	var size int64 = -1
	// A bound far past the ticks a passing run needs (20 ms each), for a
	// loaded machine; the failure is said at it, within the test.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		fi, err := os.Stat(wal)
		if err != nil {
			t.Fatal(err)
		}
		if size = fi.Size(); size == 0 {
			break
		}
	}
	close(stop)
	reads.Wait()
	if readErr != nil {
		t.Fatalf("the reader failed: %v", readErr)
	}
	if size != 0 {
		t.Errorf("the WAL is %d bytes 20 s after the writes stopped, a reader reading; want it truncated to 0 by the checkpoint", size)
	}
	if n, err := s.Views(t.Context(), "slug-0-0"); err != nil || n != hits/10 {
		t.Errorf("views of slug-0-0 after the checkpoints = %d, %v; want %d", n, err, hits/10)
	}
}

// hitFromWriters makes hits hits from each of writers goroutines at once,
// writer w's on its own slugs slug-w-0 to slug-w-(slugs-1) in turn, as
// serve's connections write, and returns when all are done.
func hitFromWriters(t *testing.T, s *Store, writers, hits, slugs int) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range hits {
				if _, err := s.Hit(t.Context(), fmt.Sprintf("slug-%d-%d", w, i%slugs)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
