package racefile

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/sqldb"
)

// Sender is what a race file plays on: a service it sends requests of its
// own to, one at a time or staged as one synchronized burst.
// *httpapi.Client is one: a race file plays on http:// and https://
// targets, with their headers, --insecure and --sync.
type Sender interface {
	Send(ctx context.Context, r httpapi.Request) (httpapi.Response, error)
	StageRequests(ctx context.Context, rs []httpapi.Request) ([]func(context.Context) (httpapi.Response, error), error)
}

var _ Sender = (*httpapi.Client)(nil)

// maxKeptBody bounds an answer's body as a trial keeps it for the rule: a
// saved result judges it again, so the body is kept whole or not at all.
const maxKeptBody = 64 << 10

// Scenario makes the race a story the engine plays as it plays its own:
// run, load, explain, shards and verify take it as they take a built-in
// story. env holds the values of the variables the file declares (env:),
// as the command line read them; Environ reads them from the environment.
// It gives the file no database (ScenarioWith does): enough to judge a
// saved result again, whose trials kept what they read.
func (f *File) Scenario(env map[string]string) (*engine.Scenario, error) {
	return f.scenario(env, nil)
}

func (f *File) scenario(env map[string]string, dbs []dbFlag) (*engine.Scenario, error) {
	for _, name := range f.Env {
		if _, ok := env[name]; !ok {
			return nil, &Error{File: f.Path, Msg: fmt.Sprintf("env: %s is not set; set it in the environment (the file reads only the variables it declares)", name)}
		}
	}
	title := f.Title
	if title == "" {
		title = "a race on any HTTP API, judged by its own rule"
	}
	// No "read back" in the words of a file that reads nothing back.
	// A SQL race's setup and readback are statements, not requests.
	step := "request"
	if f.SQLRace() {
		step = "statement"
	}
	read, judged, state := "then "+results.Plural(int64(len(f.Readback)), step)+" read back", "what was read back", "the state read back"
	if len(f.Readback) == 0 {
		read, judged, state = "and no readback", "the burst's answers", "the burst's answers"
	}
	sc := &engine.Scenario{
		Tale: engine.Tale{
			Name:  f.Name,
			Title: title,
			Story: fmt.Sprintf("A race file (%s): %s, then %s released together, %s; "+
				"the hard rule is judged on %s. The file declares no history model, so no "+
				"history check is made.", f.Path, results.Plural(int64(len(f.Setup)), "setup "+step), f.burstWords(), read, judged),
			Rule:      f.Rule.Src + " (judged on " + state + "; no history check: the file declares no model)",
			Fix:       "A race file names no fix: the rule says what must hold, and a target that holds it shows how.",
			Needs:     "HTTP API: a race file plays on http:// and https:// targets",
			KeyPrefix: f.KeyPrefix,
		},
		Request: engine.Request{
			DefaultRequests: f.Requests,
		},
		Verdict: engine.Verdict{
			Judge:    f.judge,
			DamageOf: f.damage,
			Tell:     f.tell,
		},
		Tuning: engine.Tuning{
			Settings: &results.Settings{Race: f.record(env)},
		},
	}
	if len(f.burstCaptures) > 0 {
		// The other shards would send the burst without them.
		sc.Unsplittable = fmt.Sprintf("its burst sends what its setup captured (%s), which only the shard that runs the setup knows",
			strings.Join(f.burstCaptures, ", "))
	}
	if f.Soft != nil {
		sc.SoftRule = f.Soft.Src
		sc.Soft = f.soft
	}
	env = maps.Clone(env)
	if f.SQLRace() {
		f.sqlScenario(sc, env, dbs)
		return sc, nil
	}
	sc.Rebind(func(engine.Binder) engine.Binder {
		return func(store any) (engine.Player, bool) {
			s, ok := store.(Sender)
			if !ok {
				return engine.Player{}, false
			}
			return (&player{f: f, s: s, env: env, store: sync.OnceValue(func() storeTarget { return storeTargetOf(store, dbs) }), trials: map[string]*trialState{}}).bind(), true
		}
	})
	return sc, nil
}

// ScenarioWith is Scenario for a command that fires the race: o says
// where its databases are and whether it may run commands, and is
// checked against the file first (a usage error naming the flag).
func (f *File) ScenarioWith(env map[string]string, o Options) (*engine.Scenario, error) {
	dbs, err := f.checkStore(o)
	if err != nil {
		return nil, err
	}
	return f.scenario(env, dbs)
}

// Environ reads the variables the file declares from the environment; a
// missing one is left out, for Scenario to name.
func (f *File) Environ() map[string]string {
	out := map[string]string{}
	for _, name := range f.Env {
		if v, ok := os.LookupEnv(name); ok {
			out[name] = v
		}
	}
	return out
}

func (f *File) burstWords() string {
	if len(f.Burst) == 1 && f.Burst[0].Tx != nil && f.Burst[0].Kind == "transaction" {
		return results.Plural(int64(f.Requests), "transaction")
	}
	if len(f.Burst) == 1 {
		return results.Plural(int64(f.Requests), "copy") + " of " + f.Burst[0].Kind
	}
	var kinds []string
	for _, s := range f.Burst {
		kinds = append(kinds, fmt.Sprintf("%d × %s", s.Count, s.Kind))
	}
	return strings.Join(kinds, " and ")
}

// kindOf is the burst entry request i comes from: the entries' counts in
// order, over again when -n asks for more.
func (f *File) kindOf(i int) *Step {
	i %= f.Requests
	for _, s := range f.Burst {
		if i < s.Count {
			return s
		}
		i -= s.Count
	}
	return f.Burst[len(f.Burst)-1]
}

// player is a race file bound to one opened target: the state of the
// trial in flight on each key, between its setup and its readback.
type player struct {
	f   *File
	s   Sender
	env map[string]string
	// store is the target's name, URL and databases, for the readbacks
	// that reach the store: found when first read, since a story binds
	// a typed nil to learn whether a store can play it (Scenario.Plays).
	store func() storeTarget
	// db is a SQL race's target database, nil for a race on a service.
	db *sqldb.DB

	mu     sync.Mutex
	next   int // the next trial's number
	trials map[string]*trialState
	// n is the burst's N as the engine plays it (Player.Sized), for
	// repeat: requests; 0 until it says.
	n atomic.Int64
}

// trialState is one trial's: its variables, then its answers, then what
// was read back. A staged burst's requests each write only their own slot
// of answers; requests sent one by one (a sequential trial, or a load's
// arrivals on the key, numbered across the whole load) add theirs to sent
// under mu, put in order when the trial is read back.
type trialState struct {
	vars     expr.Vars
	answers  []results.RaceAnswer
	mu       sync.Mutex
	sent     []sentAnswer
	readback *results.Readback
	// secrets are the values its outputs hide (File.secrets).
	secrets []string
}

// sentAnswer is the answer to request i, sent on its own.
type sentAnswer struct {
	i  int
	ra results.RaceAnswer
}

// keep adds the answer to request i, sent on its own.
func (st *trialState) keep(i int, ra results.RaceAnswer) {
	st.mu.Lock()
	st.sent = append(st.sent, sentAnswer{i, ra})
	st.mu.Unlock()
}

// allAnswers are the trial's answers in request order: the staged burst's,
// then those sent on their own, by their numbers.
func (st *trialState) allAnswers() []results.RaceAnswer {
	st.mu.Lock()
	defer st.mu.Unlock()
	slices.SortFunc(st.sent, func(a, b sentAnswer) int { return a.i - b.i })
	out := slices.Clone(st.answers)
	for _, s := range st.sent {
		out = append(out, s.ra)
	}
	return out
}

func (p *player) bind() engine.Player {
	pl := engine.Player{
		Stage: p.stage,
		Do: func(ctx context.Context, key string, i int) engine.Answer {
			st := p.state(key)
			req, err := p.request(p.f.kindOf(i), st, i)
			if err != nil {
				st.keep(i, results.RaceAnswer{Kind: p.f.kindOf(i).Kind})
				return engine.Answer{Outcome: results.Errored, Err: err}
			}
			resp, err := p.s.Send(ctx, req)
			a, ra := p.answer(st, i, resp, err)
			st.keep(i, ra)
			return a
		},
		Read: func(ctx context.Context, key string) (int64, error) { return p.read(ctx, key) },
		ReadTrial: func(ctx context.Context, key string, _ []results.Request) (int64, error) {
			return p.read(ctx, key)
		},
		Readback: func(key string) *results.Readback {
			if st := p.take(key); st != nil {
				return st.readback
			}
			return nil
		},
		Part: func(key string) *results.Readback {
			st := p.take(key)
			if st == nil {
				return nil
			}
			return &results.Readback{Answers: st.allAnswers(), Bodies: p.f.captured(st)}
		},
		Sized: func(n int) { p.n.Store(int64(n)) },
		Rejoin: func(key string, whole *results.Readback) {
			st := p.state(key)
			st.answers = whole.Answers
			for name, b := range whole.Bodies {
				if v, ok := expr.DecodeJSON(b); ok {
					st.vars.Captures[name] = v
				}
			}
		},
	}
	if len(p.f.Setup) > 0 {
		// Only a file with setup readies its key: a sharded run waits on
		// the shard that does it.
		pl.Prelude = func(ctx context.Context, key string, _ func(time.Duration) error) error { return p.setup(ctx, key) }
	}
	return pl
}

// take ends the trial on key and returns its state, nil when it has none:
// read once, so that memory stays flat over trials.
func (p *player) take(key string) *trialState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.trials[key]
	delete(p.trials, key)
	return st
}

// captured are the setup's answers and captures, as JSON, by their
// names, a secret one hidden: a saved result never holds a session.
func (f *File) captured(st *trialState) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(st.vars.Captures))
	for name, v := range st.vars.Captures {
		b, _ := json.Marshal(f.shown(name, v))
		out[name] = json.RawMessage(f.hide(st.secrets, string(b)))
	}
	return out
}

// state is the trial on key, made on first use (a trial without setup).
func (p *player) state(key string) *trialState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.trials[key]
	if st == nil {
		st = &trialState{vars: expr.Vars{Key: p.f.Key.Of(key), Trial: p.next, I: -1, N: -1, Env: p.env, Captures: map[string]any{}}}
		st.secrets = p.f.secrets(&st.vars)
		p.next++
		p.trials[key] = st
	}
	return st
}

// request is step's request for request i of the trial (-1 outside the
// burst).
func (p *player) request(s *Step, st *trialState, i int) (httpapi.Request, error) {
	v := st.vars
	v.I = i
	if i >= 0 {
		v.Own = p.f.own(i)
	}
	return requestOf(s, &v)
}

// requestOf is step's request with the holes' values v.
func requestOf(s *Step, v *expr.Vars) (httpapi.Request, error) {
	fail := func(err error) (httpapi.Request, error) {
		return httpapi.Request{}, fmt.Errorf("%s: %w", s.Kind, err)
	}
	path, err := s.Path.Expand(v, pathEscape)
	if err != nil {
		return fail(err)
	}
	h, err := s.header(v)
	if err != nil {
		return fail(err)
	}
	var body []byte
	if s.Body != nil {
		if body, err = s.Body.Render(v); err != nil {
			return fail(err)
		}
	}
	return httpapi.Request{Method: s.Method, Path: path, Header: h, Body: body}, nil
}

// pathEscape encodes a value for a path segment, or the query where it
// goes after a "?": racelab's own keys and captures are not paths.
func pathEscape(s string) string { return url.PathEscape(s) }

// setup sends the setup requests in order, before the burst. Each must
// answer 2xx; one named with as: must answer JSON.
func (p *player) setup(ctx context.Context, key string) error {
	st := p.state(key)
	for _, s := range p.f.Setup {
		err := p.setupStep(ctx, s, st)
		st.secrets = p.f.secrets(&st.vars)
		if err != nil {
			return p.f.hideErr(st.secrets, fmt.Errorf("setup: %w", err))
		}
	}
	return nil
}

// call sends a setup or readback step with the holes' values v and
// returns what it took: its JSON by its as: name, its captures by
// theirs. Any answer but 2xx, no JSON where one is named, or a capture
// that fails is an error, a *stepError whose cause leaves out the
// trial's own values.
func (p *player) call(ctx context.Context, s *Step, st *trialState, v expr.Vars) (map[string]any, error) {
	shape := s.Method + " " + s.Path.Shape()
	req, err := requestOf(s, &v)
	if err != nil {
		return nil, &stepError{err.Error(), shape + ": " + strings.ReplaceAll(err.Error(), st.vars.Key, "…")}
	}
	resp, err := p.s.Send(ctx, req)
	if err != nil {
		return nil, &stepError{err.Error(), shape + ": " + strings.ReplaceAll(err.Error(), st.vars.Key, "…")}
	}
	ctype := resp.Header.Get("Content-Type")
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &stepError{fmt.Sprintf("%s %s answered %d %s, want 2xx%s", req.Method, req.Path, resp.Status, http.StatusText(resp.Status), note(resp.Body)),
			shape + ": " + statusWords(resp.Status, ctype)}
	}
	took, err := p.f.take(s, resp)
	if err != nil {
		return nil, err
	}
	if s.As == "" {
		return took, nil
	}
	body, ok := expr.DecodeJSON(resp.Body)
	if !ok {
		return nil, &stepError{fmt.Sprintf("%s %s answered %d with a body that is not JSON%s; %s needs JSON", req.Method, req.Path, resp.Status, note(resp.Body), s.As),
			shape + ": " + statusWords(resp.Status, ctype) + ", not JSON"}
	}
	took[s.As] = body
	return took, nil
}

// note shows the start of a body in an error.
func note(body []byte) string {
	s := strings.TrimSpace(string(body))
	switch {
	case s == "":
		return " (empty body)"
	case len(s) > 120:
		s = strings.ToValidUTF8(s[:120], "") + "…"
	}
	return fmt.Sprintf(": %q", s)
}

// stage readies the burst's requests lo to lo+n on key as one
// synchronized burst (a shard's span of it when lo > 0).
func (p *player) stage(ctx context.Context, key string, lo, n int) ([]func(context.Context) engine.Answer, error) {
	st := p.state(key)
	st.answers = make([]results.RaceAnswer, n)
	reqs := make([]httpapi.Request, n)
	for i := range reqs {
		var err error
		if reqs[i], err = p.request(p.f.kindOf(lo+i), st, lo+i); err != nil {
			return nil, err
		}
	}
	staged, err := p.s.StageRequests(ctx, reqs)
	if err != nil {
		return nil, err
	}
	fs := make([]func(context.Context) engine.Answer, n)
	for i, f := range staged {
		fs[i] = func(ctx context.Context) engine.Answer {
			resp, err := f(ctx)
			a, ra := p.answer(st, lo+i, resp, err)
			st.answers[i] = ra
			return a
		}
	}
	return fs, nil
}

// answer decides request i's outcome by its entry's allowed: and refused:,
// and returns it as the rule will see it, for the caller to keep. A
// redirect, a 5xx, a body kept whole only over maxKeptBody, or an answer
// neither allowed nor refused is an error: the trial proves nothing
// either way.
func (p *player) answer(st *trialState, i int, resp httpapi.Response, err error) (engine.Answer, results.RaceAnswer) {
	s := p.f.kindOf(i)
	a := engine.Answer{Value: int64(resp.Status), Arrival: resp.Arrival, Early: resp.Early}
	ra := results.RaceAnswer{Kind: s.Kind, Status: resp.Status}
	fail := func(e error) (engine.Answer, results.RaceAnswer) {
		a.Outcome, a.Err = results.Errored, p.f.hideErr(st.secrets, e)
		return a, ra
	}
	if err != nil {
		return fail(err)
	}
	if len(resp.Body) <= maxKeptBody {
		ra.Body = p.f.hide(st.secrets, string(resp.Body))
	}
	ra.Headers = map[string]string{}
	for name, vs := range resp.Header {
		if len(vs) > 0 && len(vs[0]) <= 1024 {
			ra.Headers[strings.ToLower(name)] = p.f.hideHeader(st.secrets, name, vs[0])
		}
	}
	if len(resp.Body) > maxKeptBody {
		return fail(fmt.Errorf("%s answered %d with %d bytes, over the %d a trial keeps for its rule", s.Kind, resp.Status, len(resp.Body), maxKeptBody))
	}
	a.Outcome, err = s.outcome(ra)
	if err != nil {
		return fail(err)
	}
	return a, ra
}

// outcome says what an answer kept whole was by the step's allowed: and
// refused:: the same on the answer as it came and on the answer as a
// trial keeps it (a load's answers, read again per key for the rule).
func (s *Step) outcome(ra results.RaceAnswer) (results.Outcome, error) {
	switch {
	case ra.Status >= 300 && ra.Status <= 399:
		return results.Errored, fmt.Errorf("%s answered %d %s (to %s): a redirect is not an answer; point the target at where it leads", s.Kind, ra.Status, http.StatusText(ra.Status), ra.Headers["location"])
	case ra.Status >= 500:
		return results.Errored, fmt.Errorf("%s answered %d %s%s", s.Kind, ra.Status, http.StatusText(ra.Status), note([]byte(ra.Body)))
	}
	vars := answerVars(ra)
	ok, err := s.Allowed.Bool(vars)
	if err != nil {
		return results.Errored, fmt.Errorf("%s answered %d: allowed: %w", s.Kind, ra.Status, err)
	}
	if ok {
		return results.Allowed, nil
	}
	no, err := s.Refused.Bool(vars)
	if err != nil {
		return results.Errored, fmt.Errorf("%s answered %d: refused: %w", s.Kind, ra.Status, err)
	}
	if no {
		return results.Refused, nil
	}
	return results.Errored, fmt.Errorf("%s answered %d%s: neither allowed (%s) nor refused (%s)", s.Kind, ra.Status, note([]byte(ra.Body)), s.Allowed.Src, s.Refused.Src)
}

// answerVars are the variables of allowed: and refused: for one answer:
// its body as JSON when it is JSON, else as text.
func answerVars(ra results.RaceAnswer) map[string]any {
	body, ok := expr.DecodeJSON([]byte(ra.Body))
	if !ok {
		body = ra.Body
	}
	return map[string]any{"status": int64(ra.Status), "body": body, "headers": ra.Headers}
}

// read sends the readback requests after the burst and keeps what they
// answered, with the setup's answers and the burst's, for the rule. A
// readback that fails leaves the trial unjudged (Readback.Error), not the
// target: the next trial may read back fine.
func (p *player) read(ctx context.Context, key string) (int64, error) {
	st := p.state(key)
	rb := &results.Readback{Answers: st.allAnswers(), Bodies: p.f.captured(st)}
	st.readback = rb
	for _, s := range p.f.Readback {
		took, err := p.readOne(ctx, s, st, rb)
		if err != nil {
			if ctx.Err() != nil {
				return 0, err
			}
			fail(rb, p.f.hide(st.secrets, "read back: "+err.Error()), p.f.hide(st.secrets, "readback "+causeOf(s, err)))
			return 0, nil
		}
		for name, v := range took {
			st.vars.Captures[name] = v // a later readback may read it
			b, _ := json.Marshal(p.f.shown(name, v))
			rb.Bodies[name] = json.RawMessage(p.f.hide(st.secrets, string(b)))
		}
	}
	if p.f.Counted == nil {
		return 0, nil
	}
	vars, err := p.f.ruleVars(rb, nil)
	if err != nil {
		fail(rb, err.Error(), err.Error())
		return 0, nil
	}
	v, err := p.f.Counted.Eval(vars)
	n, isInt := v.(int64)
	switch {
	case err != nil:
		fail(rb, "counted: "+err.Error(), "counted: "+err.Error())
	case !isInt:
		why := fmt.Sprintf("counted: %s is %s, not a whole number", p.f.Counted.Src, expr.JSONKind(v))
		fail(rb, why, why)
	}
	return n, nil
}

// ruleVars are a trial's variables for its rules: the counts (from t, nil
// at readback time), the answers and what was read back.
func (f *File) ruleVars(rb *results.Readback, t *results.Trial) (map[string]any, error) {
	vars := map[string]any{}
	answers := make([]any, len(rb.Answers))
	for i, ra := range rb.Answers {
		a := answerVars(ra)
		a["i"], a["kind"] = int64(i), ra.Kind
		switch {
		case t != nil && i < len(t.Requests):
			r := t.Requests[i]
			a["allowed"], a["refused"] = r.Outcome == results.Allowed, r.Outcome == results.Refused
			a["ms"] = float64(r.Return-r.Invoke) / float64(time.Millisecond)
		case t != nil:
			// A load's key keeps its answers but not its requests (their
			// instants are the load's, in its percentiles): each is
			// judged again as it was when it came, and has no ms.
			o := f.outcome(ra)
			a["allowed"], a["refused"] = o == results.Allowed, o == results.Refused
		}
		answers[i] = a
	}
	vars["answers"] = answers
	if t != nil {
		vars["allowed"], vars["refused"], vars["errors"] = int64(t.Allowed), int64(t.Refused), int64(t.Errors)
		// A trial's requests, or a load's on the key, which keeps only
		// their counts.
		vars["requests"] = int64(max(len(t.Requests), t.Allowed+t.Refused+t.Errors))
	}
	for _, name := range slices.Sorted(maps.Keys(rb.Bodies)) {
		v, ok := expr.DecodeJSON(rb.Bodies[name])
		if !ok {
			return nil, fmt.Errorf("%s: the saved answer is not JSON", name)
		}
		vars[name] = v
	}
	return vars, nil
}

// outcome is a kept answer's outcome again, by the first burst entry of
// its kind; one that never came (status 0) is an error.
func (f *File) outcome(ra results.RaceAnswer) results.Outcome {
	i := slices.IndexFunc(f.Burst, func(s *Step) bool { return s.Kind == ra.Kind })
	if ra.Status == 0 || i < 0 {
		return results.Errored
	}
	o, _ := f.Burst[i].outcome(ra)
	return o
}

// judge judges a trial by the hard rule on what it read back. A trial
// whose readback failed, or whose rule cannot be evaluated (a field it
// reads is missing), is left unjudged: inconclusive, never "holds". So is
// one whose errored requests leave the rule undecided: it is broken only
// when the rule fails for every way they could have gone (see ways).
func (f *File) judge(t *results.Trial, target string) {
	if t.Readback == nil {
		t.Readback = &results.Readback{Error: "nothing was read back", Cause: "nothing was read back"}
		return
	}
	if t.Readback.Error != "" {
		return
	}
	rb := *t.Readback
	rb.Cause = ""
	t.Readback = &rb
	vars, err := f.ruleVars(&rb, t)
	if err != nil {
		fail(&rb, "rule: "+err.Error(), "rule: "+err.Error())
		return
	}
	ways, ok := f.ways(vars, t)
	if !ok {
		rb.Cause = f.erroredCause(t, fmt.Sprintf("too many ways to weigh them answer by answer (over %d)", maxWays))
		return
	}
	broke, worst := 0, math.Inf(1)
	for _, w := range ways {
		held, err := f.Rule.Bool(w)
		if err != nil {
			// Kept: without it a rule that cannot be evaluated would
			// leave the trial "holds".
			fail(&rb, "rule: "+err.Error(), "rule: "+err.Error())
			return
		}
		if held {
			continue
		}
		broke++
		sev, err := f.severity(w, t.Counted)
		if err != nil {
			fail(&rb, err.Error(), err.Error())
			return
		}
		worst = min(worst, sev)
	}
	switch {
	case broke == len(ways):
		t.Broken, t.Severity = true, worst
		t.Why = fmt.Sprintf("%s: rule %s broke: %s", target, f.Rule.Src, f.Rule.Values(vars))
		if t.Errors > 0 {
			t.Why += fmt.Sprintf(" (however the %s went)", results.Plural(int64(t.Errors), "errored request"))
		}
	case broke > 0:
		rb.Cause = f.erroredCause(t, "the rule breaks in some of the ways they could have gone, not in all")
	case t.Errors > 0:
		rb.Cause = f.erroredCause(t, "the rule holds however they went, but an errored answer proves nothing")
	}
}

// soft judges the soft rule; one that cannot be evaluated is not broken
// (the trial is then unjudged by judge already).
func (f *File) soft(t *results.Trial) bool {
	if t.Readback == nil || t.Readback.Error != "" {
		return false
	}
	vars, err := f.ruleVars(t.Readback, t)
	if err != nil {
		return false
	}
	ok, err := f.Soft.Bool(vars)
	return err == nil && !ok
}

// damage says how far a broken trial strayed: the file's damage:, or the
// values its rule read.
func (f *File) damage(t *results.Trial) string {
	if !t.Broken || t.Readback == nil {
		return ""
	}
	vars, err := f.ruleVars(t.Readback, t)
	if err != nil {
		return ""
	}
	if f.Damage != nil {
		if v, err := f.Damage.Eval(vars); err == nil {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	return f.Rule.Values(vars)
}

// tell says what a trial that held came to: the values its rule read.
func (f *File) tell(t *results.Trial, target string) string {
	switch {
	case t.Readback == nil:
		return target + ": nothing was read back"
	case t.Readback.Error != "":
		return target + ": not judged: " + t.Readback.Error
	case t.Readback.Cause != "": // errored requests left the rule undecided
		return target + ": not judged: " + t.Readback.Cause
	}
	vars, err := f.ruleVars(t.Readback, t)
	if err != nil {
		return target + ": not judged: " + err.Error()
	}
	return fmt.Sprintf("%s: rule held: %s", target, f.Rule.Values(vars))
}
