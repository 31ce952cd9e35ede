package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

// Bounds of the batch-read check, in one place.
const (
	// maxBatchKeys is how many trials' keys a target's batch read is checked
	// on: the first ones whose single read answered.
	maxBatchKeys = 20
	// batchSize is how many keys go into one batch read, well under the
	// contract server's limit (handler.MaxBatchKeys) and short enough a
	// URL for keys encoded twice.
	batchSize = 10
)

// BatchReader reads many keys' counts in one read, when the store offers
// it for the story: nil when it does not.
type BatchReader func(ctx context.Context, keys []string) ([]int64, error)

// CounterBatch is ten-hits-one-view's batch read: a story.BatchCounter's
// ViewsMany.
func CounterBatch(store any) BatchReader {
	if b, ok := store.(story.BatchCounter); ok {
		return b.ViewsMany
	}
	return nil
}

// BatchKey is one key and its single read after its burst.
type BatchKey struct {
	key   string
	count int64
}

// CheckBatch reads keys in batches of batchSize and compares each total
// with its single read. A store that offers no batch read after all gives
// no check (nil).
func CheckBatch(ctx context.Context, read BatchReader, keys []BatchKey) *results.BatchCheck {
	if read == nil || len(keys) == 0 {
		return nil
	}
	b := &results.BatchCheck{}
	for start := 0; start < len(keys); start += batchSize {
		chunk := keys[start:min(start+batchSize, len(keys))]
		names := make([]string, len(chunk))
		for i, k := range chunk {
			names[i] = k.key
		}
		got, err := read(ctx, names)
		switch {
		case errors.Is(err, story.ErrNoBatch):
			return nil
		case err == nil && len(got) != len(chunk):
			err = fmt.Errorf("batch read answered %d totals for %d keys", len(got), len(chunk))
		}
		if err != nil {
			b.Error = err.Error()
			return b
		}
		for i, k := range chunk {
			b.Keys++
			if got[i] != k.count {
				b.Mismatches = append(b.Mismatches, results.BatchMismatch{Key: k.key, Single: k.count, Batch: got[i]})
			}
		}
	}
	return b
}
