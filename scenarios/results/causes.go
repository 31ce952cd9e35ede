package results

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxCauses bounds the distinct causes a Tally keeps apart: a service
// failing in ever new words cannot grow it further; the trials past it
// count under OtherCauses.
const maxCauses = 64

// OtherCauses is the cause the trials past maxCauses distinct ones count
// under.
const OtherCauses = "other causes"

// Cause is how many inconclusive trials failed for one reason, and the
// first of them (Trial.Index).
type Cause struct {
	Trials int `json:"trials"`
	First  int `json:"first"`
}

// Causes are a race file's inconclusive trials by their cause
// (Trial.Cause).
type Causes map[string]Cause

// add counts t under its cause; only a race file's trials (those with a
// Readback) are counted, since the built-in stories say their causes in
// lines of their own.
func (c Causes) add(t *Trial) Causes {
	if t.Readback == nil {
		return c
	}
	return c.addN(t.Cause(), 1, t.Index)
}

func (c Causes) addN(cause string, n, first int) Causes {
	if c == nil {
		c = Causes{}
	}
	if _, ok := c[cause]; !ok && len(c) >= maxCauses {
		cause = OtherCauses
	}
	got, ok := c[cause]
	if !ok || first < got.First {
		got.First = first
	}
	got.Trials += n
	c[cause] = got
	return c
}

// merge adds o's causes, whose trials are numbered from offset on.
func (c Causes) merge(o Causes, offset int) Causes {
	for _, cause := range slices.Sorted(maps.Keys(o)) {
		c = c.addN(cause, o[cause].Trials, o[cause].First+offset)
	}
	return c
}

// Lines says each cause with its count and one trial (numbered from 1, as
// the table numbers them), the most frequent first:
// "readback GET /accounts/…: 401 Unauthorized (10, e.g. #1)".
func (c Causes) Lines() []string {
	causes := slices.SortedFunc(maps.Keys(c), func(a, b string) int {
		return cmp.Or(c[b].Trials-c[a].Trials, c[a].First-c[b].First, strings.Compare(a, b))
	})
	out := make([]string, len(causes))
	for i, cause := range causes {
		out[i] = fmt.Sprintf("%s (%d, e.g. #%d)", cause, c[cause].Trials, c[cause].First+1)
	}
	return out
}

// Cause says why an inconclusive trial proved nothing: a race file's
// recorded cause, else the first of the reasons Inconclusive weighs.
func (t *Trial) Cause() string {
	if rb := t.Readback; rb != nil && rb.Cause != "" {
		return rb.Cause
	}
	if t.Readback.Failed() {
		return t.Readback.Error
	}
	switch {
	case t.Errors > 0:
		for _, r := range t.Requests {
			if r.Outcome == Errored && r.Error != "" {
				return "failed requests (first: " + r.Error + ")"
			}
		}
		return "failed requests"
	case t.Unsynchronized:
		return "answers came before the release"
	case t.NotSimultaneous:
		return "burst not simultaneous"
	case t.History == HistoryUnknown:
		return "the history check ran out of time"
	}
	return "proved nothing"
}

// worstOf is t as the worst trial so far.
func worstOf(t *Trial) worstTrial {
	w := worstTrial{Index: t.Index, Over: t.Over, Lost: t.Lost, Damage: t.Damage}
	if t.Broken && t.Readback != nil {
		w.Ranked, w.Severity, w.Why = true, t.Severity, t.Why
	}
	return w
}

// beatenBy reports whether t strayed further than w: by over plus lost,
// except that a race file's broken trial beats every trial that is not
// one, and another only by a higher severity.
func (w worstTrial) beatenBy(t *Trial) bool { return w.below(worstOf(t)) }

// below is beatenBy for a trial already made a worstTrial (a merged
// tally's).
func (w worstTrial) below(o worstTrial) bool {
	switch {
	case w.Ranked != o.Ranked:
		return o.Ranked
	case o.Ranked && o.Severity != w.Severity:
		return o.Severity > w.Severity
	}
	return o.Over+o.Lost > w.Over+w.Lost
}

// WorstWhy is the account of a race file's worst broken trial, "" when
// the worst trial is not one.
func (w worstTrial) WorstWhy() string {
	if !w.Ranked {
		return ""
	}
	return w.Why
}
