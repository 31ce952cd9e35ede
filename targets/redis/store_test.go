package redis

import (
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/storetest"
)

// TestKit runs the checks every real-server store passes, one subtest each
// (storetest.Kit says what each shows); on Redis the optimistic strategy
// is WATCH.
func TestKit(t *testing.T) { kit.Run(t) }

// BenchmarkHit measures one view hit per strategy, all goroutines on one
// slug, as in the story.
func BenchmarkHit(b *testing.B) { kit.BenchmarkHit(b) }

// TestKeysStayUnderPrefixAndExpire checks that every key a strategy writes
// starts with KeyPrefix and carries an expiry.
func TestKeysStayUnderPrefixAndExpire(t *testing.T) {
	for _, strategy := range Strategies {
		t.Run(storetest.StrategyName(strategy), func(t *testing.T) {
			s := testServer.Store(t, Config{Strategy: strategy})
			ctx := t.Context()
			name := storetest.Key(t, 0)
			if _, err := s.Hit(ctx, name); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Consume(ctx, name, storetest.QuotaLimit); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Checkout(ctx, name, "buyer"); err != nil {
				t.Fatal(err)
			}
			if err := s.Subscribe(ctx, name); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Download(ctx, name, storetest.QuotaLimit); err != nil {
				t.Fatal(err)
			}
			keys, err := s.redis().Keys(ctx, "*"+name+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 6 {
				t.Errorf("keys: got %q, want views, quota, claim, claims, plan and downloads", keys)
			}
			for _, k := range keys {
				if !strings.HasPrefix(k, KeyPrefix) {
					t.Errorf("key %q lacks prefix %q", k, KeyPrefix)
				}
				ttl, err := s.redis().PTTL(ctx, k).Result()
				if err != nil {
					t.Fatal(err)
				}
				if ttl <= 0 {
					t.Errorf("key %q: got TTL %v, want one", k, ttl)
				}
			}
		})
	}
}
