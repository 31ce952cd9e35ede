package sqlite

import (
	"cmp"
	"fmt"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/storetest"
	"github.com/racelab/racelab/targets/story"
)

// A Store plays the subscription story.
var _ story.Plans = (*Store)(nil)

// The atomic strategy decides the plan and the day's count in one
// statement: exactly the limit under a burst, nothing after a cancel.
func TestPlansAtomic(t *testing.T) {
	rounds := 10
	if raceDetector {
		rounds = 3
	}
	storetest.PlansExact(t, open(t, Config{}, storetest.PlansN), rounds)
}

// The naive strategy serves a cancelled plan from its cache until the
// read is a TTL old, the default one and a short one, in virtual time.
func TestPlansNaiveStale(t *testing.T) {
	for _, ttl := range []time.Duration{0, 2 * time.Second} {
		t.Run(fmt.Sprint(ttl), func(t *testing.T) {
			v := clock.NewVirtual(storetest.PlansStart)
			s := open(t, Config{Strategy: StrategyNaive, Clock: v, PlanCacheTTL: ttl}, 1)
			storetest.PlansStale(t, s, v, cmp.Or(ttl, story.PlanCacheTTL))
		})
	}
}

// A negative plan cache keeps nothing: the naive strategy then sees the
// cancel at once, and only its quota is naive.
func TestPlansNaiveWithoutCache(t *testing.T) {
	s := open(t, Config{Strategy: StrategyNaive, PlanCacheTTL: -1, ThinkTime: -1}, 1)
	storetest.ReadThenCancel(t, s, "dora")
	if ok, n, err := s.Download(t.Context(), "dora", storetest.QuotaLimit); err != nil || ok || n != 0 {
		t.Errorf("download after the cancel: (%t, %d, %v); want (false, 0)", ok, n, err)
	}
}

// The day's count starts over at midnight UTC on either strategy, in
// virtual time.
func TestPlansDayRollsOver(t *testing.T) {
	for _, strategy := range []string{StrategyAtomic, StrategyNaive} {
		t.Run(fmt.Sprintf("%q", strategy), func(t *testing.T) {
			v := clock.NewVirtual(storetest.PlansStart)
			storetest.PlansDayRollsOver(t, open(t, Config{Strategy: strategy, Clock: v}, 1), v)
		})
	}
}

// On a virtual clock the naive strategy's think time moves virtual time,
// and the store says which clock it runs on.
func TestNaivePausesOnItsClock(t *testing.T) {
	v := clock.NewVirtual(storetest.PlansStart)
	s := open(t, Config{Strategy: StrategyNaive, Clock: v, ThinkTime: time.Hour}, 1)
	if s.Clock() != clock.Clock(v) {
		t.Fatalf("Clock() = %v; want the virtual clock", s.Clock())
	}
	if _, err := s.Hit(t.Context(), "post"); err != nil {
		t.Fatal(err)
	}
	if got := v.Now().Sub(storetest.PlansStart); got != time.Hour {
		t.Errorf("virtual time moved %v over one naive hit; want the think time, 1h", got)
	}
	if _, ok := open(t, Config{}, 1).Clock().(clock.Real); !ok {
		t.Error("a store without a clock does not say it runs on the real one")
	}
}
