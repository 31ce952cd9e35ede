package scenarios

import (
	"context"
	"fmt"
	"strconv"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

// oneOfAKind is how many of each item exist in five-checkouts unless the
// run says otherwise: the checkout op's default limit, one.
var oneOfAKind = defaultLimit(story.OpCheckout)

var fiveCheckouts = fiveCheckoutsOf(oneOfAKind)

// stockKnob is five-checkouts' knob: how many of each item exist.
var stockKnob = engine.IntKnob("stock", "copies of each item (default 1); the rule becomes successes <= stock",
	1, engine.MaxRequests, fmt.Sprintf("1 to %d copies", engine.MaxRequests))

// fiveCheckoutsOf is the story of an item that exists stock times: the
// rule becomes successes ≤ stock, every success recorded as a claim. The
// default stock of one records no settings, so its results read as before.
func fiveCheckoutsOf(stock int64) *engine.Scenario {
	sc := engine.DefineTrial(engine.Scenario{
		Tale: engine.Tale{
			Name:  "five-checkouts",
			Title: "five buyers check out the one painting at once; all five are let through",
			Story: "A shop sells paintings that exist once each. Its first version kept " +
				"the sold mark in a key-value store and looked at it before opening a " +
				"payment session. Five buyers who check out the same painting at the " +
				"same instant all find it unsold, and all five get a payment page. " +
				"Claiming the item in one single-threaded object, or in one conditional " +
				"statement, lets exactly one buyer through; the others are told it is " +
				"being checked out (409) and when it will be free again.",
			Rule: stockRule(stock),
			Fix: "Before opening a payment session, the shop asks one object to reserve " +
				"every item of the order, all or none. The object handles one request at " +
				"a time, so exactly one buyer gets the reservation; every other buyer is " +
				"answered 409, the item is being checked out, with the time it will be " +
				"free again. One conditional statement (UPDATE … WHERE remaining > 0) " +
				"gives a database the same single winner. Time opens a second gap: the " +
				"reservation lasts seven minutes, the payment page at least thirty. So " +
				"when a later buyer reserves after the first reservation lapsed, the shop " +
				"first expires the earlier session at the provider, and refuses the later " +
				"buyer as sold if the provider answers that it was already paid. The " +
				"provider's events close the loop: expired releases a reservation at once, " +
				"completed marks the items sold for 24 hours.",
			Needs:     "inventory",
			Lineup:    []string{"kv", "actor", "sqlite"},
			KeyPrefix: "item",
		},
		Request: engine.Request{
			DefaultRequests: 5,
			Op:              story.OpCheckout,
		},
		Verdict: engine.Verdict{
			Model: engine.ItemModel(stock),
			// An oversold checkout is also one without a claim: said once, the
			// same buyers are not counted twice ("4 over, 4 lost" read as eight).
			Damage: func(over, lost int64) string {
				switch {
				case over > 0 && lost > over:
					return fmt.Sprintf("%d oversold, %d more unrecorded", over, lost-over)
				case over > 0:
					return fmt.Sprintf("%d oversold", over)
				case lost > 0:
					return fmt.Sprintf("%s unrecorded", results.Plural(lost, "sale"))
				}
				return ""
			},
			Tell: func(t *results.Trial, target string) string {
				return fmt.Sprintf("%s: %s succeeded, %d refused (409), %s recorded", target,
					results.Plural(int64(t.Allowed), "checkout"), t.Refused, results.Plural(t.Counted, "claim"))
			},
			Judge: func(t *results.Trial, target string) {
				judgeLimit(t, max(0, int64(t.Allowed)-stock), func(sold int64) string {
					why := fmt.Sprintf("%s: %s succeeded for %d in stock, %s recorded", target,
						results.Plural(sold, "checkout"), stock, results.Plural(t.Counted, "claim"))
					if t.Over > 0 {
						why += fmt.Sprintf(": %d oversold", t.Over)
					}
					return why
				}, func(sold int64) string {
					return fmt.Sprintf("%s: %s succeeded, yet %s recorded", target,
						results.Plural(sold, "checkout"), results.Plural(t.Counted, "claim"))
				})
			},
		},
		Teaching: engine.Teaching{
			Extras: []engine.Extra{{After: "fix", Replay: paymentReplays}, {After: "fix", Replay: outageReplays}},
			Parts: []engine.Part{{Flag: "payment", Bars: len(paymentDesigns), Run: runPayments,
				Alone: "compares the two shop designs in virtual time",
				Usage: "five-checkouts only: play the whole checkout (7-minute reservations, 30-minute payment sessions) against both shop designs, in virtual time"},
				{Flag: "outage", Bars: len(outagePolicies), Run: runOutages,
					Alone: "compares the two failure policies in virtual time",
					Usage: "five-checkouts only: the lock object down from 2m to 5m, the KV sold marks cached; sales served and paintings oversold, fail-open next to fail-closed"}},
		},
		Tuning: engine.Tuning{
			Knobs: []engine.Knob{stockKnob.Knob},
		},
	}, func(s story.Stocked, ctx context.Context, key string, i int) engine.Answer {
		buyer := "buyer-" + strconv.Itoa(i+1)
		var ok bool
		var err error
		if stock == oneOfAKind {
			ok, err = s.Checkout(ctx, key, buyer)
		} else {
			ok, err = s.CheckoutOf(ctx, key, buyer, stock)
		}
		v := int64(0)
		if ok {
			v = 1
		}
		return engine.AnswerOf(ok, v, err)
	}, func(s story.Stocked, ctx context.Context, key string, _ []results.Request) (int64, error) {
		return s.Claims(ctx, key)
	}, nil)
	sc.Limit = stock
	sc.Vary = func(set results.Settings) (*engine.Scenario, error) {
		var err error
		k := stockKnob.Read(set, oneOfAKind, &err)
		if err != nil {
			return nil, err
		}
		v := fiveCheckoutsOf(k)
		if k != oneOfAKind {
			v.Settings = &results.Settings{}
			stockKnob.Put(v.Settings, k)
		}
		return v, nil
	}
	return sc
}

// stockRule is the rule for an item of stock copies.
func stockRule(stock int64) string {
	if stock == 1 {
		return "at most 1 checkout succeeds per item, and every success is recorded as a claim"
	}
	return fmt.Sprintf("at most %d checkouts succeed per item (a stock of %d, never below zero), and every success is recorded as a claim", stock, stock)
}
