package scenarios

import (
	"context"
	"fmt"

	"github.com/racelab/racelab/targets"
)

// DailyLimit is the free tier of six-become-four: downloads a visitor a UTC day.
const DailyLimit = 5

var sixBecomeFour = &Scenario{
	Name:  "six-become-four",
	Title: "a free tier of five downloads a day; the counter lets more through and counts fewer",
	Story: "A tool grants five original-quality downloads a visitor a day, then " +
		"asks for a paid plan. The first version kept the count in a key-value " +
		"store: read it, refuse at five, otherwise write it plus one. Its author " +
		"downloaded six images in a row and the counter said four, because reads " +
		"are cached and the check and the write are separate steps. Fired all " +
		"at once, every request reads the same count and every one is granted. " +
		"One single-threaded object per visitor, or one conditional upsert, makes " +
		"the check and the increment a single step: 5 granted, the rest refused, " +
		"counter at 5.",
	Rule: fmt.Sprintf("at most %d downloads granted a visitor a day, and every granted download counted", DailyLimit),
	Fix: "One object per visitor, addressed by a hash of the IP, receives every " +
		"download of that visitor and handles them one at a time: while it awaits " +
		"its own storage no other request is delivered to it, so the check and " +
		"the increment are one step, and its storage is strongly consistent, so " +
		"no read is stale. A refused download is not counted, and the day and the " +
		"count live in one key that starts again when the day changes, so nothing " +
		"needs cleaning up. A conditional upsert (… DO UPDATE … WHERE count < 5 " +
		"RETURNING count) does the same in one SQL statement.",
	Needs:              targets.CanQuota,
	DefaultRequests:    12,
	SequentialRequests: 6, // six images, one after another
	// The story's own cast: KV against one Durable Object per visitor.
	// Both run in virtual time, so the default run replays exactly.
	Lineup:    []string{"kv", "actor"},
	Op:        targets.OpDownload,
	Limit:     DailyLimit,
	KeyPrefix: "visitor",

	Do: func(ctx context.Context, store any, key string, _ int) Answer {
		return answerOf(store.(targets.Quota).Consume(ctx, key, DailyLimit))
	},
	Read: func(ctx context.Context, store any, key string) (int64, error) {
		return store.(targets.Quota).Count(ctx, key)
	},
	Tell: func(t *Trial, target string) string {
		return fmt.Sprintf("%s: %s granted, %d refused, counter at %d", target,
			plural(int64(t.Allowed), "download"), t.Refused, t.Counted)
	},
	Judge: func(t *Trial, target string) {
		allowed := int64(t.Allowed)
		t.Over = max(0, allowed-DailyLimit)
		t.Lost = max(0, allowed-t.Counted)
		switch {
		case t.Over > 0 || t.Lost > 0:
			t.Broken = true
			t.Why = fmt.Sprintf("%s: %s granted against a limit of %d, counter at %d", target,
				plural(allowed, "download"), DailyLimit, t.Counted)
			if t.Over > 0 {
				t.Why += fmt.Sprintf(": %d over the limit", t.Over)
			}
			if t.Lost > 0 {
				t.Why += fmt.Sprintf(", %d never counted", t.Lost)
			}
		case t.Counted > allowed+int64(t.Errors):
			t.Broken = true
			t.Why = fmt.Sprintf("%s: %s granted, yet the counter is at %d: refused downloads were counted",
				target, plural(allowed, "download"), t.Counted)
		}
	},
}
