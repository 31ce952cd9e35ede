package redis

import (
	"context"
	"fmt"
	"strings"
)

// globEscape escapes what a Redis MATCH pattern reads as a wildcard.
var globEscape = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`)

// Clean deletes every key the stories keep for key (targets.Cleaner): the
// engine calls it once a trial's key has been read back, so that a
// finished run leaves nothing behind instead of keys living RecordTTL. A
// rate limit's window keys are left to their own expiry, max(60 s,
// window): their names hold window numbers the key alone does not give.
func (s *Store) Clean(ctx context.Context, key string) error {
	keys := []string{viewsKey(key), quotaKey(key), claimKey(key), claimsKey(key), stockKey(key), planKey(key), downloadsKey(key)}
	if err := s.redis().Unlink(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("clean %s: %w", key, err)
	}
	return nil
}

// cleanBatch is how many keys CleanAll asks for, and unlinks, at a time.
const cleanBatch = 1000

// CleanAll deletes every key under KeyPrefix on the server cfg names, what
// interrupted runs (and sharded runs, whose keys wait for verify) left
// behind, and answers how many it deleted; within, when not empty, limits
// it to keys holding it (a test's own, on a server others use). Keys of a
// run still going are deleted too: run it when none is.
func CleanAll(ctx context.Context, cfg Config, within string) (int64, error) {
	s, err := Open(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	c := s.redis()
	// The prefix holds no glob character to escape; within may.
	match := KeyPrefix + "*"
	if within != "" {
		match += globEscape.Replace(within) + "*"
	}
	var removed int64
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, match, cleanBatch).Result()
		if err != nil {
			return removed, fmt.Errorf("clean: scan %s: %w", match, err)
		}
		if len(keys) > 0 {
			n, err := c.Unlink(ctx, keys...).Result()
			removed += n
			if err != nil {
				return removed, fmt.Errorf("clean: delete %d keys: %w", len(keys), err)
			}
		}
		if cursor = next; cursor == 0 {
			return removed, nil
		}
	}
}
