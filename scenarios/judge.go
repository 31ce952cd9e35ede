package scenarios

import (
	"fmt"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

// defaultLimit is op's limit as the ops table has it (the HTTP
// contract's, story.OpSpec.DefaultLimit): what a story that grants up to a
// limit plays unless its settings say otherwise.
func defaultLimit(op story.Op) int64 {
	spec, ok := op.Spec()
	if !ok || spec.DefaultLimit == 0 {
		panic("scenarios: op " + string(op) + " has no limit in the ops table")
	}
	return spec.DefaultLimit
}

// judgeLimit judges a trial of a story that grants up to a limit, one
// rule for all of them so that they break for the same reasons: a trial
// is broken when more were granted than the limit allows (over, as the
// story counts it) or than were counted (lost), and when more were counted
// than could have been, granted and failed together (refused requests
// were counted). strayed and overcounted say why in the story's words,
// given the count granted, with Over and Lost already set.
func judgeLimit(t *results.Trial, over int64, strayed, overcounted func(allowed int64) string) {
	allowed := int64(t.Allowed)
	t.Over = over
	t.Lost = max(0, allowed-t.Counted)
	switch {
	case t.Over > 0 || t.Lost > 0:
		t.Broken = true
		t.Why = strayed(allowed)
	case t.Counted > allowed+int64(t.Errors):
		t.Broken = true
		t.Why = overcounted(allowed)
	}
}

// overLimitWords is the end of a quota's or a limiter's why: ": 2 over
// the limit, 1 never counted", each part only when it happened.
func overLimitWords(t *results.Trial) string {
	var why string
	if t.Over > 0 {
		why += fmt.Sprintf(": %d over the limit", t.Over)
	}
	if t.Lost > 0 {
		why += fmt.Sprintf(", %d never counted", t.Lost)
	}
	return why
}
