package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// Timelines writes, under a run's table (racelab run --timeline), for
// each target the lanes of its first broken trial, or of its first trial
// when none broke.
func Timelines(w io.Writer, res *results.Result, width int) error {
	labels := results.Labels(res.Targets)
	for i := range res.Targets {
		tr := &res.Targets[i]
		if len(tr.Trials) == 0 {
			continue
		}
		pick := &tr.Trials[0]
		for j := range tr.Trials {
			if tr.Trials[j].Broken {
				pick = &tr.Trials[j]
				break
			}
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := Timeline(w, labels[i], tr.Clock, pick, width); err != nil {
			return err
		}
	}
	return nil
}

// Timeline writes one lane per request of trial, drawn from the steps the
// store recorded (a traced run): what each request read, what it wrote,
// when its write landed, and, for a write that overwrote another request's
// update without having seen it, whose update it erased. Requests of a
// store that records no steps (SQLite, Redis, PostgreSQL, HTTP) get their
// instants and answer only. Lanes come in the order their last step
// happened (a write landing, an answer), so that a chain of erasures reads
// downwards, each lane erasing one above it; requests keep their numbers,
// from 1. A lane wider than width folds under itself (0: never).
func Timeline(w io.Writer, target string, clock results.Clock, trial *results.Trial, width int) error {
	var b strings.Builder
	unit := "real time"
	if clock == results.ClockVirtual {
		unit = "virtual time"
	}
	b.WriteString(wrapLine(fmt.Sprintf("%s, trial %d (%s from the release, lanes in finishing order):", target, trial.Index+1, unit), width) + "\n")
	erased := Erasures(trial)
	answer := laneAnswers(trial)
	numWidth := len(fmt.Sprint(len(trial.Requests)))
	for _, r := range byTime(trial) {
		head := fmt.Sprintf("  #%-*d ", numWidth, r.Index+1)
		var parts []string
		if len(r.Steps) == 0 {
			parts = append(parts, fmt.Sprintf("%s sent", formatInstant(r.Invoke)))
		}
		for _, s := range r.Steps {
			parts = append(parts, stepText(s))
		}
		parts = append(parts, fmt.Sprintf("→ %s at %s", answer(r), formatInstant(r.Return)))
		if q, ok := erased[r.Index]; ok {
			parts = append(parts, erasedText(q))
		}
		b.WriteString(lane(head, parts, width))
	}
	for _, line := range readbackLines(trial.Readback) {
		b.WriteString(wrapLine("  "+line, width) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// maxAnswerBody bounds an answer's body in a lane: enough for a small
// JSON answer, the whole of it stays in the saved result.
const maxAnswerBody = 40

// laneAnswers says what each request of trial was told, for its lane. A
// race file's trial keeps each answer (Trial.Readback): its lane shows the
// status and the start of the body, and the burst entry when the burst
// mixes several, since a status alone does not say which answer broke the
// rule.
func laneAnswers(trial *results.Trial) func(r *results.Request) string {
	rb := trial.Readback
	if rb == nil || len(rb.Answers) == 0 {
		return answerText
	}
	mixed := slices.ContainsFunc(rb.Answers, func(a results.RaceAnswer) bool { return a.Kind != rb.Answers[0].Kind })
	return func(r *results.Request) string {
		if r.Outcome == results.Errored || r.Index < 0 || r.Index >= len(rb.Answers) {
			return answerText(r)
		}
		a := rb.Answers[r.Index]
		words := string(r.Outcome)
		if mixed {
			words = a.Kind + ": " + words
		}
		if a.Status == 0 {
			// A SQL transaction's answer: its lane's steps already say
			// whether it committed or aborted, and it has no status.
			return words
		}
		words += fmt.Sprintf(" %d", a.Status)
		if body := strings.Join(strings.Fields(a.Body), " "); body != "" {
			if len(body) > maxAnswerBody {
				body = strings.ToValidUTF8(body[:maxAnswerBody], "") + "…"
			}
			words += " " + body
		}
		return words
	}
}

// readbackLines say what a race file's trial read back after its burst,
// one line a named answer, or why its rule could not be judged.
func readbackLines(rb *results.Readback) []string {
	if rb == nil {
		return nil
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(rb.Bodies)) {
		out = append(out, fmt.Sprintf("read back %s = %s", name, rb.Bodies[name]))
	}
	if rb.Error != "" {
		out = append(out, "not judged: "+rb.Error)
	}
	return out
}

// lane joins a request's parts after head, " · " between steps, folding
// between parts (and, for a part too wide itself, between words) onto
// lines indented under the first part when the lane is wider than width.
func lane(head string, parts []string, width int) string {
	line := head
	var b strings.Builder
	indent := strings.Repeat(" ", narrow.String(head))
	for i, p := range parts {
		sep := ""
		if i > 0 {
			sep = " · "
			if strings.HasPrefix(p, "→") || strings.HasPrefix(p, "✗") {
				sep = " "
			}
		}
		if width > 0 && line != indent && line != head && narrow.String(line+sep+p) > width {
			b.WriteString(line + "\n")
			line = indent
			sep = ""
		}
		if width > 0 && narrow.String(line+sep+p) > width {
			folded := wrapWords(p, width, line+sep, indent)
			b.WriteString(strings.Join(folded[:len(folded)-1], "\n") + "\n")
			line = folded[len(folded)-1]
			continue
		}
		line += sep + p
	}
	b.WriteString(line + "\n")
	return b.String()
}

// byTime is trial's requests in the order their last step happened, the
// instant they were answered when they recorded none; ties keep the
// requests' own order.
func byTime(trial *results.Trial) []*results.Request {
	rs := make([]*results.Request, len(trial.Requests))
	for i := range trial.Requests {
		rs[i] = &trial.Requests[i]
	}
	last := func(r *results.Request) time.Duration {
		if n := len(r.Steps); n > 0 {
			return r.Steps[n-1].At
		}
		return r.Return
	}
	slices.SortStableFunc(rs, func(a, b *results.Request) int { return cmp.Compare(last(a), last(b)) })
	return rs
}

// Erasures finds, for each request whose write overwrote another request's
// update without having read it, the index of the request it erased. A
// write erases the update it lands on when the value its request last read
// is not the value that update left: it was computed from older state, so
// the other request's change is gone. Landings are the stores' write-lands
// steps (KV: last write wins by arrival), or their writes where the store
// applies a write at once (an actor's own storage). Only keyed steps
// count.
func Erasures(trial *results.Trial) map[int]int {
	type landing struct {
		req   int
		at    time.Duration
		key   string
		value string
		read  string // what the request last read of key before writing
	}
	var ls []landing
	for _, r := range trial.Requests {
		lands := slices.ContainsFunc(r.Steps, func(s results.Step) bool { return s.Op == "write-lands" })
		reads := map[string]string{}
		for _, s := range r.Steps {
			switch {
			case s.Key == "":
				// A step of no key is no store's value: a SQL transaction
				// traces its read rows and its write's statement, which
				// says nothing of the value it left, so it erases nothing
				// that can be shown (its rule says what was lost).
			case s.Op == "read":
				reads[s.Key] = s.Value
			case s.Op == "write-lands" || s.Op == "write" && !lands:
				ls = append(ls, landing{r.Index, s.At, s.Key, s.Value, reads[s.Key]})
			}
		}
	}
	slices.SortStableFunc(ls, func(a, b landing) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.req - b.req
	})
	out := map[int]int{}
	last := map[string]landing{}
	for _, l := range ls {
		if p, ok := last[l.key]; ok && p.req != l.req && l.read != p.value {
			out[l.req] = p.req
		}
		last[l.key] = l
	}
	return out
}

func stepText(s results.Step) string { return formatInstant(s.At) + " " + stepWords(s) }

// stepWords is what a step did, without its instant: a text lane puts the
// instant before it, an SVG lane draws it on the time axis.
func stepWords(s results.Step) string {
	v := CompactValue(s.Value)
	switch s.Op {
	case "read":
		// Only where the value came from matters in a lane; the full note
		// stays in the JSON.
		note := ""
		switch {
		case strings.Contains(s.Note, "stale"):
			note = " (cached, stale)"
		case strings.Contains(s.Note, "cache hit"):
			note = " (cached)"
		}
		return fmt.Sprintf("read %s%s", v, note)
	case "write":
		return "write " + v
	case "write-lands":
		return "lands"
	case "refuse":
		return fmt.Sprintf("refused (%s)", s.Note)
	case "expired":
		return fmt.Sprintf("%s expired (%s)", s.Value, s.Note)
	case "checkout":
		return "checkout opens payment session " + s.Value
	case "pay":
		return "pays " + s.Value
	case "event":
		// The provider's webhook, as the shop hears it: "the shop hears
		// cs_1 expired" says whose session and what happened.
		return cmp.Or(s.Note, "event "+s.Value)
	default:
		if s.Note != "" {
			return fmt.Sprintf("%s (%s)", s.Op, s.Note)
		}
		return s.Op
	}
}

func answerText(r *results.Request) string {
	switch {
	case r.Outcome != results.Errored && r.Answer != "":
		// The story's own words ("reserved", "3 views", "paid: sold"):
		// a bare number means something else in every story.
		return r.Answer
	}
	switch r.Outcome {
	case results.Allowed:
		return fmt.Sprintf("answered %d", r.Value)
	case results.Refused:
		return fmt.Sprintf("refused (%d)", r.Value)
	default:
		return "failed: " + r.Error
	}
}

// formatInstant writes an instant after the release: milliseconds with one
// decimal within a burst, seconds with three past a second, so that a
// sequential trial's lanes stay readable; hours past an hour, for a script
// that runs a day.
func formatInstant(d time.Duration) string {
	if d >= time.Hour {
		d = d.Round(time.Second)
		return fmt.Sprintf("%dh%02dm%02ds", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	}
	if d >= time.Minute {
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	if d >= time.Second {
		return fmt.Sprintf("%.3fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// CompactValue shows a stored value in a lane: "nothing" for none, and a
// JSON object (a quota's {"day":…,"n":…}) as its fields, key=value. It is
// exported so that every view of a lane (the classroom's too) writes a
// value the same way.
func CompactValue(v string) string {
	if v == "" {
		return "nothing"
	}
	var m map[string]any
	if !strings.HasPrefix(v, "{") || json.Unmarshal([]byte(v), &m) != nil {
		return v
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}
