package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	stories "github.com/racelab/racelab/targets/story"
)

// EdgeLimits are the limits LimitsAtTheEdge holds each story to: 1, where
// a limit read as "limit - 1" refuses everything, and two more.
var EdgeLimits = []int64{1, 2, 5}

// limited is one limit a store keeps, asked one request at a time: take
// answers whether the request on key was granted and the count after it
// (the count that refused it, when refused).
type limited struct {
	name string
	take func(ctx context.Context, key string, limit int64, i int) (bool, int64, error)
}

// limitsOf lists the limits s keeps: a daily quota, a rate limit, a
// stock of several, a plan's daily originals.
func limitsOf(s any) []limited {
	var out []limited
	if q, ok := s.(Quota); ok {
		out = append(out, limited{"download", func(ctx context.Context, key string, limit int64, _ int) (bool, int64, error) {
			return q.Consume(ctx, key, limit)
		}})
	}
	if l, ok := s.(stories.Limiter); ok {
		out = append(out, limited{"limit", func(ctx context.Context, key string, limit int64, _ int) (bool, int64, error) {
			a, err := l.Admit(ctx, key, stories.Window{Limit: limit, Length: time.Hour})
			return a.Allowed, a.Count, err
		}})
	}
	if st, ok := s.(stories.Stocked); ok {
		out = append(out, limited{"checkout of a stock", func(ctx context.Context, key string, limit int64, i int) (bool, int64, error) {
			ok, err := st.CheckoutOf(ctx, key, fmt.Sprintf("buyer-%d", i), limit)
			if err != nil {
				return false, 0, err
			}
			n, err := st.Claims(ctx, key)
			return ok, n, err
		}})
	}
	if p, ok := s.(stories.Plans); ok {
		out = append(out, limited{"original", func(ctx context.Context, key string, limit int64, i int) (bool, int64, error) {
			if i == 1 {
				if err := p.Subscribe(ctx, key); err != nil {
					return false, 0, err
				}
			}
			return p.Download(ctx, key, limit)
		}})
	}
	return out
}

// LimitsAtTheEdge asks each limit s keeps for limit+1 requests, one after
// another, for each of EdgeLimits: the first limit are granted, counted
// 1 to limit, and the one past it is refused at limit, uncounted. A store
// that compares with <= where it means < (or counts the refused one)
// fails here, in its own package, against its own server.
func LimitsAtTheEdge(t *testing.T, s any) {
	ls := limitsOf(s)
	if len(ls) == 0 {
		t.Fatalf("%T keeps none of the limits LimitsAtTheEdge knows", s)
	}
	for _, l := range ls {
		t.Run(l.name, func(t *testing.T) {
			for _, limit := range EdgeLimits {
				key := Key(t, int(limit))
				for i := 1; i <= int(limit)+1; i++ {
					granted, count, err := l.take(t.Context(), key, limit, i)
					if err != nil {
						t.Fatalf("limit %d, request %d: %v", limit, i, err)
					}
					want := min(int64(i), limit)
					if granted != (int64(i) <= limit) || count != want {
						t.Errorf("limit %d, request %d: granted %v, count %d; want granted %v, count %d",
							limit, i, granted, count, int64(i) <= limit, want)
					}
				}
			}
		})
	}
}
