package engine

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

// This is the only file that imports porcupine, the linearizability
// checker: an API change there stays here.
//
// A trial's history is its N requests, each an operation that took effect
// at some instant between its invoke and its return, followed by the read
// of what the store counted, invoked after every request returned. The
// history is linearizable when some one-at-a-time order of those
// operations, each placed within its own interval, explains every answer
// under the story's sequential model. Counts alone can miss what this
// catches: two hits both answered "views: 1" while the final count looks
// right, or a download refused at a count below the limit.
//
// A failed request (a timeout, a refused connection) may or may not have
// taken effect, and its answer, if any, is lost. Following porcupine's
// convention for such operations, it is given a return instant after the
// read-back: it can then be placed anywhere after its invoke, including
// after the read, where taking effect is the same as never having done so;
// its answer is not checked.

// opKind is what an operation of a history does.
type opKind uint8

const (
	opRequest opKind = iota // the story's request: a hit, a download, a checkout
	opRead                  // the read of what was counted, after the burst
)

// opInput is an operation's input as the models see it.
type opInput struct {
	kind opKind
	// unknown says the request failed: whether it took effect, and what
	// it would have been answered, are not known.
	unknown bool
	// part is the part of the store the request was counted in (a rate
	// limiter's window), read off the request figure the model names;
	// zero for a model of one part.
	part int64
}

// opOutput is an operation's answer.
type opOutput struct {
	outcome results.Outcome
	value   int64
}

// Model is one story's sequential specification over a single key. Its
// state is one number: the views, the downloads counted today, or the
// claims on the item. What it says in words, it says in its op's words
// (story.OpSpec.Words), the ones the board shows: a story with an op of
// its own is described in its own.
type Model struct {
	// step applies one operation to state: whether the answer is one the
	// store could give in that state, and the state after it.
	step func(state int64, in opInput, out opOutput) (bool, int64)
	// refute checks cheap necessary conditions of linearizability and
	// says the first one the trial violates, or "". It comes before the
	// search because the search is exponential on exactly the histories
	// naive stores produce: many requests answered the same value at many
	// levels leave an exponential number of dead-end orders to try.
	refute func(t *results.Trial) string
	// inOrder, when set, reports that the trial is linearizable in an
	// order its answers alone fix, checked against real time in one pass
	// (see countedInOrder). It only ever says yes where the search would:
	// a no sends the trial to the search.
	inOrder func(t *results.Trial) bool
	// answer says one request's answer in words, for visualizations.
	answer func(out opOutput) string
	// noun says the state in words: "3 views" (its op's Unit).
	noun string
	// verb names the story's request: "hit" (its op's Request).
	verb string
	// partition, when set, splits a history into parts the store keeps
	// apart, each checked from the initial state on its own; part names
	// the request figure that says which part a request was counted in.
	partition func(history []porcupine.Operation) [][]porcupine.Operation
	part      string
}

// ModelOf returns the model of sc's story; ok is false for a story that
// has none, whose histories are not checked.
func ModelOf(sc *Scenario) (Model, bool) {
	return sc.Model, sc.Model.step != nil
}

// builtin is the row of one of the stories' own ops.
func builtin(op story.Op) story.OpSpec {
	s, _ := op.Spec()
	return s
}

// wordsOf starts a model of op: its words, and its answers said in them:
// the total for a request that is always counted ("3 views"), else the
// yes or the no, with the count where the answer holds one ("granted,
// count 5", "reserved").
func wordsOf(op story.OpSpec) Model {
	w := op.Words
	return Model{noun: w.Unit, verb: w.Request, answer: func(out opOutput) string {
		word := w.No
		if out.outcome == results.Allowed {
			word = w.Yes
		}
		switch {
		case w.Yes == "":
			return results.Plural(out.value, w.Unit)
		case op.Field == "":
			return word
		}
		return fmt.Sprintf("%s, count %d", word, out.value)
	}}
}

// CounterModel is ten-hits-one-view's store: a hit adds one and answers
// the new total.
func CounterModel() Model {
	m := wordsOf(builtin(story.OpHit))
	hit, view := m.verb, m.noun
	m.step = func(s int64, in opInput, out opOutput) (bool, int64) {
		switch {
		case in.kind == opRead:
			return out.value == s, s
		case in.unknown:
			return true, s + 1
		default:
			return out.outcome == results.Allowed && out.value == s+1, s + 1
		}
	}
	m.refute = func(t *results.Trial) string {
		f := facts(t)
		allowed := int64(len(f.allowed))
		for _, r := range f.allowed {
			if r.Value < 1 {
				return fmt.Sprintf("request %d was answered %s, although a %s counts itself", r.Index, results.Plural(r.Value, view), hit)
			}
		}
		if a, b, ok := sameValue(f.allowed); ok {
			return fmt.Sprintf("requests %d and %d were both answered %s", a.Index, b.Index, results.Plural(a.Value, view))
		}
		if top, ok := highest(f.allowed); ok && top.Value > allowed+f.failed {
			return fmt.Sprintf("request %d was answered %s, more than the %s sent could count", top.Index, results.Plural(top.Value, view), results.Plural(allowed+f.failed, hit))
		}
		if top, ok := highest(f.allowed); ok && t.Counted < top.Value {
			return fmt.Sprintf("request %d was answered %s, yet the store read back %d", top.Index, results.Plural(top.Value, view), t.Counted)
		}
		if t.Counted < allowed {
			return fmt.Sprintf("%s were answered, yet the store read back %s", results.Plural(allowed, hit), results.Plural(t.Counted, view))
		}
		if t.Counted > allowed+f.failed {
			return fmt.Sprintf("the store read back %s, more than the %s sent could count", results.Plural(t.Counted, view), results.Plural(allowed+f.failed, hit))
		}
		return ""
	}
	m.inOrder = countedInOrder
	return m
}

// countedInOrder reports whether a counter's trial is linearizable in
// the one order its answers allow, when they allow only one: every
// request counted and answered a different total from 1 to N, and N read
// back. A hit answered k must then take effect k-th, so the check needs
// no search: only that the order keeps to real time, each request's
// instant placed no earlier than its invoke and those before it, and no
// later than its return. Operations touching at an instant count as
// overlapping, as they do for porcupine. This is the history every
// correct store gives, trial after trial; the search spent on it was a
// tenth of a virtual actor trial (issue 24).
func countedInOrder(t *results.Trial) bool {
	n := len(t.Requests)
	if t.Counted != int64(n) {
		return false
	}
	var small [64]int // a burst's worth, on the stack
	byTotal := small[:]
	if n > len(small) {
		byTotal = make([]int, n)
	}
	byTotal = byTotal[:n] // request index + 1 by the total it was answered; 0: none yet
	for i, r := range t.Requests {
		if r.Outcome != results.Allowed || r.Value < 1 || r.Value > int64(n) || byTotal[r.Value-1] != 0 {
			return false
		}
		byTotal[r.Value-1] = i + 1
	}
	latest := time.Duration(math.MinInt64)
	for _, i := range byTotal {
		r := t.Requests[i-1]
		invoke := r.Invoke
		if r.Early { // as Operations places it: before every other request
			invoke = -1
		}
		if latest = max(latest, invoke); latest > r.Return {
			return false
		}
	}
	// The read-back, invoked after every return, comes last and reads N.
	return true
}

// QuotaModel is six-become-four's store: a download is granted iff the
// count is below limit, and then counted; either way it answers the count
// after it.
func QuotaModel(limit int64) Model { return BoundedModel(builtin(story.OpDownload), limit) }

// BoundedModel is the store of an op whose request is granted iff the
// key's count is below limit, and then counted, and which answers the
// count after it either way: a quota, a rate limit's window, or a
// story's own op played as a capped count (story.Capped), said in op's
// words.
func BoundedModel(op story.OpSpec, limit int64) Model {
	m := wordsOf(op)
	unit := m.noun
	m.step = boundedStep(limit, true)
	m.refute = func(t *results.Trial) string {
		f := facts(t)
		granted := int64(len(f.allowed))
		for _, r := range f.allowed {
			if r.Value < 1 || r.Value > limit {
				return fmt.Sprintf("request %d was granted at count %d, which a limit of %d never reaches", r.Index, r.Value, limit)
			}
		}
		if a, b, ok := sameValue(f.allowed); ok {
			return fmt.Sprintf("requests %d and %d were both granted at count %d", a.Index, b.Index, a.Value)
		}
		if granted > limit {
			return fmt.Sprintf("%s were granted against a limit of %d", results.Plural(granted, unit), limit)
		}
		for _, r := range f.refused {
			// A refusal needs the count at the limit, and the count
			// never passes the limit: it must answer exactly the limit.
			if r.Value != limit {
				return fmt.Sprintf("request %d was refused at count %d, not at the limit of %d", r.Index, r.Value, limit)
			}
		}
		if top, ok := highest(f.allowed); ok && t.Counted < top.Value {
			return fmt.Sprintf("request %d was granted at count %d, yet the store read back %d", top.Index, top.Value, t.Counted)
		}
		if t.Counted < granted {
			return fmt.Sprintf("%s were granted, yet the store read back %d", results.Plural(granted, unit), t.Counted)
		}
		if most := min(limit, granted+f.failed); t.Counted > most {
			return fmt.Sprintf("the store read back %d, more than the %s granted (and %d failed) could count", t.Counted, results.Plural(granted, unit), f.failed)
		}
		if len(f.refused) > 0 && t.Counted != limit {
			return fmt.Sprintf("request %d was refused, so the count had reached %d, yet the store read back %d", f.refused[0].Index, limit, t.Counted)
		}
		return ""
	}
	return m
}

// LimiterModel is a rate limiter's store: a quota per fixed window, the
// window of each request being its request figure named window. The
// store keys each window apart (caller and window number), so a burst
// that straddles a window boundary on the real clock meets two quotas,
// each granting up to the limit and counting from one, and the count a
// request is answered belongs to its own window. Linearizability is
// local: the history holds when each window's part of it does, which is
// how porcupine is asked (byWindow). Only the sum of the windows' counts
// is read back, so across windows the read is checked against bounds
// instead (refuteWindows).
func LimiterModel(limit int64, window string) Model {
	m := BoundedModel(builtin(story.OpLimit), limit)
	inOne := m.refute
	m.refute = func(t *results.Trial) string {
		if ws := FigureValues(t.Requests, window); len(ws) > 1 {
			return refuteWindows(t, window, ws, limit, m.noun)
		}
		return inOne(t)
	}
	m.partition, m.part = byWindow, window
	return m
}

// byWindow splits a limiter's history by the window each answered request
// was counted in. A failed request's window is not known, so it joins
// every part, where it may take effect or not. The read-back is the sum
// of every window's count, which no one part can explain: with more than
// one window it is left to refuteWindows.
func byWindow(history []porcupine.Operation) [][]porcupine.Operation {
	var windows []int64
	var failed []porcupine.Operation
	parts := map[int64][]porcupine.Operation{}
	for _, op := range history {
		in := op.Input.(opInput)
		switch {
		case in.kind == opRead:
		case in.unknown:
			failed = append(failed, op)
		default:
			if _, ok := parts[in.part]; !ok {
				windows = append(windows, in.part)
			}
			parts[in.part] = append(parts[in.part], op)
		}
	}
	if len(windows) < 2 {
		return [][]porcupine.Operation{history}
	}
	out := make([][]porcupine.Operation, 0, len(windows))
	for _, w := range windows {
		out = append(out, append(parts[w], failed...))
	}
	return out
}

// refuteWindows is the quota's refutation for a burst counted in several
// windows: within a window, grants answered distinct counts from 1 to the
// limit and refusals the limit itself; the count read back, the sum over
// the windows, lies between what the answers prove was counted and what
// the grants and the failed requests could have counted.
func refuteWindows(t *results.Trial, window string, ws []int64, limit int64, unit string) string {
	f := facts(t)
	var least, most int64
	for _, w := range ws {
		inW := func(r *results.Request) bool { return r.Figures[window] == w }
		granted, refused := filterRequests(f.allowed, inW), filterRequests(f.refused, inW)
		for _, r := range granted {
			if r.Value < 1 || r.Value > limit {
				return fmt.Sprintf("request %d was granted at count %d in window %d, which a limit of %d never reaches", r.Index, r.Value, w, limit)
			}
		}
		if a, b, ok := sameValue(granted); ok {
			return fmt.Sprintf("requests %d and %d were both granted at count %d in window %d", a.Index, b.Index, a.Value, w)
		}
		for _, r := range refused {
			if r.Value != limit {
				return fmt.Sprintf("request %d was refused at count %d in window %d, not at the limit of %d", r.Index, r.Value, w, limit)
			}
		}
		// Distinct counts from 1 to the limit: no more grants than the
		// limit, and the highest is at least their number.
		low := int64(len(granted))
		if top, ok := highest(granted); ok {
			low = top.Value
		}
		if len(refused) > 0 {
			low = limit
		}
		least += low
		most += min(limit, int64(len(granted))+f.failed)
	}
	most = min(most, int64(len(f.allowed))+f.failed)
	switch {
	case t.Counted < least:
		return fmt.Sprintf("the answers in %d windows prove %d counted, yet the store read back %d", len(ws), least, t.Counted)
	case t.Counted > most:
		return fmt.Sprintf("the store read back %d over %d windows, more than the %s granted (and %d failed) could count",
			t.Counted, len(ws), results.Plural(int64(len(f.allowed)), unit), f.failed)
	}
	return ""
}

// filterRequests keeps the requests keep says yes to.
func filterRequests(reqs []*results.Request, keep func(*results.Request) bool) []*results.Request {
	var out []*results.Request
	for _, r := range reqs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// boundedStep is the step of a count that stops at limit: a request is
// allowed while the count is below it, then counted. The quota answers the
// count, which checkValue makes the model hold it to; a checkout answers
// only yes or no.
func boundedStep(limit int64, checkValue bool) func(s int64, in opInput, out opOutput) (bool, int64) {
	return func(s int64, in opInput, out opOutput) (bool, int64) {
		next := s
		if s < limit {
			next = s + 1
		}
		switch {
		case in.kind == opRead:
			return out.value == s, s
		case in.unknown:
			return true, next
		case out.outcome == results.Allowed:
			return s < limit && (!checkValue || out.value == next), next
		default:
			return s >= limit && (!checkValue || out.value == s), s
		}
	}
}

// ItemModel is five-checkouts' store: a checkout claims the item while
// claims are below stock, and is refused once it is taken. Only outcomes
// are checked: a checkout answers yes or no, not a count.
func ItemModel(stock int64) Model {
	m := wordsOf(builtin(story.OpCheckout))
	checkout, claim := m.verb, m.noun
	m.step = boundedStep(stock, false)
	m.refute = func(t *results.Trial) string {
		f := facts(t)
		sold := int64(len(f.allowed))
		switch {
		case sold > stock:
			return fmt.Sprintf("%s succeeded for %d in stock", results.Plural(sold, checkout), stock)
		case t.Counted < sold:
			return fmt.Sprintf("%s succeeded, yet the store read back %s", results.Plural(sold, checkout), results.Plural(t.Counted, claim))
		case t.Counted > min(stock, sold+f.failed):
			return fmt.Sprintf("the store read back %s, more than %s (and %d failed) could record", results.Plural(t.Counted, claim), results.Plural(sold, checkout), f.failed)
		case len(f.refused) > 0 && t.Counted < stock:
			return fmt.Sprintf("request %d was refused as taken, yet the store read back %s", f.refused[0].Index, results.Plural(t.Counted, claim))
		}
		return ""
	}
	return m
}

// trialFacts sorts a trial's requests by outcome.
type trialFacts struct {
	allowed, refused []*results.Request // into the trial's own requests
	failed           int64
}

func facts(t *results.Trial) trialFacts {
	// Room for every request at once: most are allowed in most stories,
	// and growing a slice of copies request by request was most of the
	// bytes a virtual trial's history check allocated (issue 24).
	f := trialFacts{allowed: make([]*results.Request, 0, len(t.Requests))}
	for i := range t.Requests {
		switch r := &t.Requests[i]; r.Outcome {
		case results.Allowed:
			f.allowed = append(f.allowed, r)
		case results.Refused:
			f.refused = append(f.refused, r)
		default:
			f.failed++
		}
	}
	return f
}

// sameValue finds two requests answered the same value, the earliest pair
// by index.
func sameValue(reqs []*results.Request) (a, b *results.Request, ok bool) {
	if len(reqs) <= scanUpTo {
		for j := 1; j < len(reqs); j++ {
			for i := range j {
				if reqs[i].Value == reqs[j].Value {
					return reqs[i], reqs[j], true
				}
			}
		}
		return nil, nil, false
	}
	first := make(map[int64]int, len(reqs)) // value → index of its first request
	for j, r := range reqs {
		if i, ok := first[r.Value]; ok {
			return reqs[i], r, true
		}
		first[r.Value] = j
	}
	return nil, nil, false
}

// scanUpTo is how many requests sameValue compares pairwise rather than
// through a map: a burst of a few dozen is checked every trial, and a map
// costs more than the comparisons it saves below this size.
const scanUpTo = 32

// highest is the request answered the highest value, the first of equals.
func highest(reqs []*results.Request) (*results.Request, bool) {
	if len(reqs) == 0 {
		return nil, false
	}
	top := reqs[0]
	for _, r := range reqs[1:] {
		if r.Value > top.Value {
			top = r
		}
	}
	return top, true
}

// Porcupine wraps the model for the checker.
func (m Model) Porcupine() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return int64(0) },
		Step: func(state, input, output any) (bool, any) {
			return m.step(state.(int64), input.(opInput), output.(opOutput))
		},
		Hash: func(state any) uint64 { return uint64(state.(int64)) },
		DescribeOperation: func(input, output any) string {
			in, out := input.(opInput), output.(opOutput)
			switch {
			case in.kind == opRead:
				return "read: " + results.Plural(out.value, m.noun)
			case in.unknown:
				return m.verb + ": failed, may have taken effect"
			default:
				return m.verb + ": " + m.answer(out)
			}
		},
		DescribeState: func(state any) string { return results.Plural(state.(int64), m.noun) },
		Partition:     m.partition,
	}
}

// Operations turns a trial into porcupine's operations for the model: one
// per request, with its instants in nanoseconds from the release, then the
// read-back.
func (m Model) Operations(t *results.Trial) []porcupine.Operation {
	var last int64
	for _, r := range t.Requests {
		last = max(last, int64(r.Return))
	}
	// The read was invoked after the last answer came back.
	readCall, readReturn, never := last+1, last+2, last+3
	ops := make([]porcupine.Operation, 0, len(t.Requests)+1)
	for i, r := range t.Requests {
		op := porcupine.Operation{
			// Porcupine draws a lane per client, named by this number:
			// from 1, as every other report numbers requests.
			ClientId: i + 1,
			Input:    opInput{kind: opRequest, part: r.Figures[m.part]},
			Call:     int64(r.Invoke),
			Output:   opOutput{outcome: r.Outcome, value: r.Value},
			Return:   int64(r.Return),
		}
		if r.Early {
			// Answered before the release: it took effect before every
			// other request was invoked, but its own invoke instant
			// says otherwise.
			op.Call = -1
		}
		if r.Outcome == results.Errored {
			op.Input = opInput{kind: opRequest, unknown: true}
			op.Output = opOutput{outcome: results.Errored}
			op.Return = never
		}
		ops = append(ops, op)
	}
	return append(ops, porcupine.Operation{
		ClientId: len(t.Requests) + 1,
		Input:    opInput{kind: opRead},
		Call:     readCall,
		Output:   opOutput{outcome: results.Allowed, value: t.Counted},
		Return:   readReturn,
	})
}

// CheckHistory checks whether a trial's history is linearizable against the
// model of sc's story: a counter whose hits answer the new total, a quota
// that grants below its limit, an item that can be claimed once. It spends
// at most timeout searching (0 for no limit) and answers HistoryUnknown if
// that was not enough; why says in words what is wrong with a history that
// is not linearizable. A story without a model is not checked: "" and "".
func CheckHistory(sc *Scenario, t *results.Trial, timeout time.Duration) (verdict results.HistoryVerdict, why string) {
	m, ok := ModelOf(sc)
	if !ok || len(t.Requests) == 0 {
		return "", ""
	}
	if why := m.refute(t); why != "" {
		return results.NotLinearizable, why
	}
	if m.inOrder != nil && m.inOrder(t) {
		return results.Linearizable, ""
	}
	switch porcupine.CheckOperationsTimeout(m.Porcupine(), m.Operations(t), timeout) {
	case porcupine.Ok:
		return results.Linearizable, ""
	case porcupine.Illegal:
		return results.NotLinearizable, fmt.Sprintf("no order of the %s, each taking effect between its invoke and its return, explains every answer and the count read back",
			results.Plural(int64(len(t.Requests)), "request"))
	default:
		return results.HistoryUnknown, fmt.Sprintf("the check ran out of time after %s", timeout)
	}
}

// RecordHistory checks a judged trial's history (CheckHistory), unless
// told not to, records the verdict in the trial, and breaks the trial
// when the history is not linearizable. The rule's own Why, when
// the counts already broke it, is kept: it says more plainly what went
// wrong.
func RecordHistory(sc *Scenario, t *results.Trial, target string, e Evidence) {
	if e.SkipHistory {
		return
	}
	t.History, t.HistoryWhy = CheckHistory(sc, t, e.historyTimeout())
	if t.History == results.NotLinearizable && !t.Broken {
		t.Broken = true
		t.Why = fmt.Sprintf("%s: not linearizable: %s", target, t.HistoryWhy)
	}
}

// DescribeAnswer says in a few words what a request of the story
// was told: "3 views", "granted, count 5", "409, taken", "error". Unknown
// scenarios get the outcome and the value.
func (sc *Scenario) DescribeAnswer(r results.Request) string {
	if m, ok := ModelOf(sc); ok && r.Outcome != results.Errored {
		return m.answer(opOutput{outcome: r.Outcome, value: r.Value})
	}
	return r.AnswerWords()
}

// historyTrial picks the trial of res most worth a picture: the first whose
// history is not linearizable, else the first broken one, else the first
// trial run. ok is false when no target ran a trial.
func historyTrial(res *results.Result) (target *results.TargetResult, trial *results.Trial, ok bool) {
	for _, pick := range []func(*results.Trial) bool{
		func(t *results.Trial) bool { return t.History == results.NotLinearizable },
		func(t *results.Trial) bool { return t.Broken },
		func(*results.Trial) bool { return true },
	} {
		for i := range res.Targets {
			tr := &res.Targets[i]
			if j := slices.IndexFunc(tr.Trials, func(t results.Trial) bool { return pick(&t) }); j >= 0 {
				return tr, &tr.Trials[j], true
			}
		}
	}
	return nil, nil, false
}

// WriteHistoryHTML writes porcupine's visualization of one trial of res
// (see historyTrial) to w: one lane per request from its invoke to its
// return, the read-back last, and the longest order of them that the model
// accepts. It is a page with porcupine's own script and styles inline.
// The search behind it is bounded by timeout; a search cut short still
// draws what it found.
func WriteHistoryHTML(w io.Writer, sc *Scenario, res *results.Result, timeout time.Duration) error {
	m, ok := ModelOf(sc)
	if !ok {
		return fmt.Errorf("%s has no history model", sc.Name)
	}
	tr, t, ok := historyTrial(res)
	if !ok {
		return fmt.Errorf("%s: no trial to draw", res.Scenario)
	}
	pm := m.Porcupine()
	_, info := porcupine.CheckOperationsVerbose(pm, m.Operations(t), timeout)
	note := fmt.Sprintf("%s on %s, trial %d (key %s)", res.Scenario, tr.Target, t.Index+1, t.Key)
	details := strings.TrimSpace(string(t.History) + ": " + t.HistoryWhy)
	if t.History == "" {
		details = "history not checked"
	}
	info.AddAnnotations([]porcupine.Annotation{
		{Tag: "racelab", Start: 0, Description: "release: " + note, Details: details},
	})
	// Visualize writes in pieces; build the page whole, so that a failing
	// writer never leaves half of it behind.
	var b bytes.Buffer
	if err := porcupine.Visualize(pm, info, &b); err != nil {
		return fmt.Errorf("draw history: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteHistoryFile writes WriteHistoryHTML's page of one trial of res,
// played by p, to the file path (racelab run --history-html). A result
// with no trial to draw writes nothing.
func WriteHistoryFile(path string, p Plan, res *results.Result) error {
	if !slices.ContainsFunc(res.Targets, func(t results.TargetResult) bool { return len(t.Trials) > 0 }) {
		return nil
	}
	var b bytes.Buffer
	if err := WriteHistoryHTML(&b, p.Scenario, res, cmp.Or(p.Evidence.HistoryTimeout, results.DefaultHistoryTimeout)); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// FigureValues lists the values the answered requests have of the request
// figure name, in order: the windows a rate limiter counted them in.
func FigureValues(reqs []results.Request, name string) []int64 {
	seen := map[int64]bool{}
	for _, r := range reqs {
		if r.Outcome != results.Errored {
			seen[r.Figures[name]] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Refute checks the cheap necessary conditions of linearizability alone,
// without the search: the first one the trial violates, or "".
func (m Model) Refute(t *results.Trial) string {
	if m.refute == nil {
		return ""
	}
	return m.refute(t)
}
