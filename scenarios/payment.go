package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/shop"
)

// The whole five-checkouts story: not a burst but minutes of checkout. A
// reservation lasts seven minutes, a payment session at least thirty, and
// the gap between the two sells an item twice unless the shop expires the
// earlier session before opening a new one. Each trial is one seeded script
// played in virtual time:
//
//   - buyer A checks out two paintings at 0:00;
//   - buyer B checks out one of them at a random minute in the first 25;
//   - A pays at a random minute in the first 35 (or gives up, one time in
//     five); B pays a few minutes after a successful checkout;
//   - every provider event reaches the shop after a random delay of up to
//     a minute and a half.
//
// The hard rule is the story's: an item that exists once is sold once.

// paymentDesigns are the two shop designs a payment run compares, naive
// first.
var paymentDesigns = []shop.Design{shop.DesignReserveOnly, shop.DesignExpireFirst}

// paymentScenario names a payment run's result.
const paymentScenario = "five-checkouts (payment)"

// paymentStory is the payment part as a saved result names it, for the
// Check of such a result: its trials are judged by judgePayment alone.
var paymentStory = &engine.Scenario{
	Tale: engine.Tale{
		Name: paymentScenario,
		Rule: paymentRule,
	},
	Request: engine.Request{
		Scripted: true,
	},
	Verdict: engine.Verdict{
		Judge: func(t *results.Trial, _ string) { judgePayment(t) },
	},
}

// paymentRule is the hard rule of the payment part.
const paymentRule = "every painting is sold at most once, however long a payment page stays open"

// runPayments plays trials of the whole checkout against each design, in
// virtual time, and returns them as a Result (one target per design). The
// same seed replays the same scripts.
func runPayments(ctx context.Context, trials int, seed int64, onTrial func(string, int, int)) (*results.Result, error) {
	res := &results.Result{Schema: results.SchemaVersion, Scenario: paymentScenario, Rule: paymentRule,
		Requests: 2, Trials: trials, Seed: seed, Script: "2 buyers, minutes apart, in virtual time"}
	sides := make([]scriptedSide, 0, len(paymentDesigns))
	for _, d := range paymentDesigns {
		sides = append(sides, shopSide(string(d), designGuarantee(d), d == shop.DesignExpireFirst,
			func(ctx context.Context, i int) (results.Trial, error) { return playPayment(ctx, d, seed, i) }))
	}
	return runScripted(ctx, res, sides, onTrial)
}

func designGuarantee(d shop.Design) string {
	if d == shop.DesignExpireFirst {
		return "expires the earlier session first"
	}
	return "none: 7-minute lock, 30-minute sessions"
}

// buyer is one buyer of a payment script.
type buyer struct {
	name    string
	items   []string
	at      time.Duration // when the checkout is sent
	pay     time.Duration // how long after a successful checkout they pay; 0: never
	session string
}

// paymentEvent is one scheduled action of a script.
type paymentEvent struct {
	at  time.Duration
	seq int
	do  func()
}

// playPayment plays trial i of the payment script of seed against design d.
func playPayment(ctx context.Context, d shop.Design, seed int64, i int) (results.Trial, error) {
	// The script depends on the seed and the trial only, so both designs
	// face exactly the same buyers at exactly the same moments.
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
	buyers := []*buyer{
		{name: "A", items: []string{"painting-1", "painting-2"}, at: 0},
		{name: "B", items: []string{"painting-2"}, at: randMinutes(rng, 0, 25)},
	}
	if rng.IntN(5) > 0 {
		buyers[0].pay = randMinutes(rng, 1, 35)
	}
	buyers[1].pay = randMinutes(rng, 1, 4)
	delays := make([]time.Duration, 16)
	for j := range delays {
		delays[j] = time.Duration(2+rng.IntN(88)) * time.Second
	}

	v := clock.NewVirtual(targets.DefaultStart)
	start := v.Now()
	s := shop.New(d, v.Now)
	reqs := make([]results.Request, len(buyers))
	for j, b := range buyers {
		reqs[j] = results.Request{Index: j, Invoke: b.at, Return: b.at, Outcome: results.Refused}
	}
	step := func(j int, op, value, note string) {
		reqs[j].Steps = append(reqs[j].Steps, results.Step{At: v.Now().Sub(start), Op: op, Value: value, Note: note})
	}
	owner := func(session string) int {
		return slices.IndexFunc(buyers, func(b *buyer) bool { return b.session == session })
	}

	var queue []paymentEvent
	seq := 0
	schedule := func(at time.Duration, do func()) {
		seq++
		queue = append(queue, paymentEvent{at, seq, do})
	}
	nextDelay := 0
	// deliver sends the provider's queued events to the shop, each after
	// its own delay, as webhooks arrive.
	deliver := func() {
		for _, e := range s.Provider.Outbox {
			delay := delays[nextDelay%len(delays)]
			nextDelay++
			schedule(v.Now().Sub(start)+delay, func() {
				s.Deliver(e)
				if j := owner(e.Session); j >= 0 {
					step(j, "event", e.Kind, "the shop hears "+e.Session+" "+e.Kind)
				}
			})
		}
		s.Provider.Outbox = nil
	}
	// noteExpired puts on each other buyer's lane the moment the shop
	// expired their open session, as the fixed design does.
	noteExpired := func(by string) {
		for k, other := range buyers {
			if sess := s.Provider.Session(other.session); sess != nil && sess.State == "expired" &&
				!slices.ContainsFunc(reqs[k].Steps, func(st results.Step) bool { return st.Op == "expired" }) && v.Now().Before(sess.ExpiresAt) {
				step(k, "expired", other.session, "by the shop, before it opens a session for "+by)
			}
		}
	}
	for j, b := range buyers {
		schedule(b.at, func() {
			a := s.Checkout(b.name, b.items)
			noteExpired(b.name)
			reqs[j].Return = v.Now().Sub(start)
			if a.Status != 200 {
				reqs[j].Answer = "refused: 409"
				step(j, "refuse", "409", a.Reason)
				deliver()
				return
			}
			b.session = a.Session
			// A checkout is answered with a payment page; the sale is
			// decided when (and whether) the buyer pays.
			reqs[j].Answer = "payment page, never paid"
			step(j, "checkout", a.Session, fmt.Sprintf("reserved %s; session open until +%s", strings.Join(b.items, " and "), shop.MinSession))
			// The provider lapses the session on its own at its expiry.
			sess := s.Provider.Session(a.Session)
			schedule(sess.ExpiresAt.Sub(start), func() { s.Provider.Lapse(); deliver() })
			if b.pay > 0 {
				schedule(v.Now().Sub(start)+b.pay, func() {
					if s.Provider.Pay(b.session) {
						reqs[j].Outcome, reqs[j].Value, reqs[j].Answer = results.Allowed, 1, "paid: sold"
						reqs[j].Return = v.Now().Sub(start)
						step(j, "pay", b.session, "paid")
					} else {
						reqs[j].Return = v.Now().Sub(start)
						reqs[j].Answer = "payment page expired: no sale"
						step(j, "refuse", b.session, "payment page expired")
					}
					deliver()
				})
			}
			deliver()
		})
	}
	err := v.Run(ctx, 1, func(ctx context.Context, _ int) {
		for len(queue) > 0 {
			slices.SortStableFunc(queue, func(a, b paymentEvent) int {
				return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
			})
			e := queue[0]
			queue = queue[1:]
			if wait := e.at - v.Now().Sub(start); wait > 0 {
				if v.Sleep(ctx, wait) != nil {
					return
				}
			}
			e.do()
		}
	})
	if err != nil {
		return results.Trial{}, fmt.Errorf("virtual time: %w", err)
	}
	t := results.Trial{Index: i, Key: fmt.Sprintf("script-%d-%d", seed, i), Requests: reqs}
	sold := 0
	for _, it := range []string{"painting-1", "painting-2"} {
		sold = max(sold, s.Provider.Completed(it))
	}
	t.Count()
	t.Counted = int64(sold)
	if judgePayment(&t) {
		t.Why = fmt.Sprintf("shop:%s: painting-2 sold %d times: buyer A paid at +%s on a session still open, buyer B at +%s",
			d, sold, clockText(reqs[0].Return), clockText(reqs[1].Return))
	}
	return t, nil
}

// judgePayment judges a payment script by its counts: a painting sold
// more often than it exists. It reports whether the trial broke.
func judgePayment(t *results.Trial) bool {
	t.Over = max(0, t.Counted-oneOfAKind)
	t.Broken = t.Over > 0
	return t.Broken
}

func randMinutes(rng *rand.Rand, lo, hi int) time.Duration {
	return time.Duration(lo)*time.Minute + time.Duration(rng.Int64N(int64(hi-lo)*int64(time.Minute/time.Second)))*time.Second
}

// clockText writes a duration of minutes as 12m05s.
func clockText(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// paymentReplays finds the seed's first payment script in which the
// reserve-only shop sells a painting twice, and replays that same script
// on the shop that expires the earlier session first, then the 24-hour
// sold mark (soldmark.go): five-checkouts' extra in `racelab explain`.
func paymentReplays(ctx context.Context, x *engine.Explainer) ([]engine.Replay, error) {
	const search = 1000
	for i := range search {
		naive, err := playPayment(ctx, shop.DesignReserveOnly, x.Seed, i)
		if err != nil {
			return nil, err
		}
		if !naive.Broken {
			continue
		}
		fixed, err := playPayment(ctx, shop.DesignExpireFirst, x.Seed, i)
		if err != nil {
			return nil, err
		}
		fixedOutcome := "shop:expire-first: painting-2 sold once"
		if fixed.Broken {
			fixedOutcome = fixed.Why
		}
		sold, err := soldMarkReplay(ctx, x.Seed)
		if err != nil {
			return nil, err
		}
		return []engine.Replay{
			{Heading: fmt.Sprintf("The whole checkout, script %d: a 7-minute reservation, a 30-minute payment page", i+1),
				Target: "shop:reserve-only", Clock: results.ClockVirtual, Trial: &naive, Outcome: naive.Why},
			{Heading: "The same script when the shop expires the earlier session before opening a new one",
				Target: "shop:expire-first", Clock: results.ClockVirtual, Trial: &fixed, Outcome: fixedOutcome},
			sold,
		}, nil
	}
	return nil, fmt.Errorf("no double sale in %d payment scripts of seed %d", search, x.Seed)
}
