package redis

import (
	"context"
	"fmt"
	"slices"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/racelab/racelab/targets/internal/server"
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

// cleanBatch is how many keys CleanScoped asks for, and unlinks, at a time.
const cleanBatch = 1000

// CleanScoped deletes the keys under KeyPrefix in scope on the server cfg
// names and answers how many it deleted, and how many it kept as written
// more recently than scope.Idle.
//
// A key's age is read off its expiry: every write sets RecordTTL, so a key
// last written d ago has RecordTTL - d to live. (OBJECT IDLETIME, the
// time since the last access, read 0 for a key untouched for seconds after
// a read of another key on Redis 7.0: not a figure to delete by.) A key
// whose write set a shorter expiry (a quota's day, a reservation) looks
// older than it is, but never older than RecordTTL, so an Idle of
// RecordTTL or more never takes it early; a key with no expiry has no age
// to tell and is kept. Redis itself expires every key RecordTTL after its
// last write, so racelab clean's default Idle (the longest load, a week)
// finds none there but keys without an expiry, which it keeps.
func CleanScoped(ctx context.Context, cfg Config, scope server.CleanScope) (removed, kept int64, err error) {
	s, err := Open(ctx, cfg)
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	c := s.redis()
	// The prefix holds no glob character to escape; within may.
	match := KeyPrefix + "*"
	if scope.Within != "" {
		match += globEscape.Replace(scope.Within) + "*"
	}
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, match, cleanBatch).Result()
		if err != nil {
			return removed, kept, fmt.Errorf("clean: scan %s: %w", match, err)
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return !scope.Holds(storyKey(k)) })
		if scope.Idle > 0 && len(keys) > 0 {
			ttls := make([]*goredis.DurationCmd, len(keys))
			if _, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
				for i, k := range keys {
					ttls[i] = p.PTTL(ctx, k)
				}
				return nil
			}); err != nil {
				return removed, kept, fmt.Errorf("clean: how long keys have to live (PTTL): %w", err)
			}
			old := keys[:0]
			for i, k := range keys {
				switch ttl := ttls[i].Val(); {
				case ttl == -2: // gone since the scan
				case ttl > 0 && RecordTTL-ttl > scope.Idle:
					old = append(old, k)
				default:
					kept++
				}
			}
			keys = old
		}
		if len(keys) > 0 {
			n, err := c.Unlink(ctx, keys...).Result()
			removed += n
			if err != nil {
				return removed, kept, fmt.Errorf("clean: delete %d keys: %w", len(keys), err)
			}
		}
		if cursor = next; cursor == 0 {
			return removed, kept, nil
		}
	}
}

// storyKey is the story's key a Redis key is for: what follows
// KeyPrefix and the kind ("racelab:views:slug-x" is "slug-x").
func storyKey(k string) string {
	_, rest, _ := strings.Cut(strings.TrimPrefix(k, KeyPrefix), ":")
	return rest
}
