package classroom

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// burstView is a burst fired from the page as the page draws it.
type burstView struct {
	Story    string       `json:"story"`
	Requests int          `json:"requests"`
	At       string       `json:"at"`
	Stores   []burstStore `json:"stores"`
}

// burstStore is what one store made of the burst.
type burstStore struct {
	Store   string `json:"store"`
	Target  string `json:"target"`
	Expect  string `json:"expect"`
	Allowed int    `json:"allowed"`
	Refused int    `json:"refused"`
	Errors  int    `json:"errors"`
	Counted int64  `json:"counted"`
	Broken  bool   `json:"broken"`
	Verdict string `json:"verdict"`
	Account string `json:"account"`
	Lanes   string `json:"lanes,omitempty"` // SVG
	Spread  string `json:"spread,omitempty"`
	Failure string `json:"failure,omitempty"`
	// Background is what the switch's load on the store came to through
	// the burst, and BackgroundLine says it as racelab run's report does;
	// both absent with the switch off.
	Background     *load.Summary `json:"background,omitempty"`
	BackgroundLine string        `json:"background_line,omitempty"`
	// Transactions are a SQL race's transactions, each with its
	// timeline in words (race.go); absent for a story's burst.
	Transactions []txView `json:"transactions,omitempty"`
}

// burstRequest is what the page's button posts.
type burstRequest struct {
	Story    string `json:"story"`
	Requests int    `json:"requests"`
}

// Refusals of the burst button, as the page shows them.
const (
	msgBusy     = "a burst is already running; wait for it to finish"
	msgTooSoon  = "one burst every %s: try again in a moment"
	maxBurstReq = 4 << 10
)

// fire runs a burst of the story at every store that plays it, through
// the engine behind racelab run, on the real clock, and answers what the
// page draws. One burst at a time, at most one every BurstEvery; a press
// beyond that is answered 429 with Retry-After.
func (r *Room) fire(w http.ResponseWriter, req *http.Request) {
	var br burstRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxBurstReq))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&br); err != nil {
		server.WriteError(w, http.StatusBadRequest, `want {"story":"ten-hits-one-view","requests":10}: `+err.Error())
		return
	}
	p := r.story(br.Story)
	if p == nil {
		server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("story %q: no store here plays it", br.Story))
		return
	}
	sc := p.sc
	if why := p.notBurst; why != "" {
		server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("story %q has no burst button: it %s; play it with racelab run %s -t http://… instead",
			sc.Name, why, sc.Name))
		return
	}
	if br.Requests < 1 || br.Requests > r.maxBurst {
		server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("requests %d: want 1 to %d", br.Requests, r.maxBurst))
		return
	}
	if !r.firing.TryLock() {
		w.Header().Set("Retry-After", "1")
		server.WriteError(w, http.StatusTooManyRequests, msgBusy)
		return
	}
	defer r.firing.Unlock()
	if res := r.limiter.Reserve(); res.Delay() > 0 {
		res.Cancel()
		wait := time.Duration(float64(time.Second) / float64(r.limiter.Limit()))
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(res.Delay().Seconds()))))
		server.WriteError(w, http.StatusTooManyRequests, fmt.Sprintf(msgTooSoon, wait))
		return
	}
	r.board.setFiring(sc.Name)
	view, err := r.burst(r.ctx, sc, br.Requests)
	if err != nil {
		// Nothing was fired (the plan was refused) or the server is
		// stopping; the page keeps the last burst it drew.
		r.board.setBurst(sc.Name, nil)
		server.WriteError(w, http.StatusServiceUnavailable, "burst not fired: "+err.Error())
		return
	}
	r.board.setBurst(sc.Name, view)
	server.WriteJSON(w, http.StatusOK, view)
}

// burst fires n requests of sc at every store that plays it, lent to the
// engine (lend), traced so that the lanes show each request's reads and
// writes.
func (r *Room) burst(ctx context.Context, sc *engine.Scenario, n int) (*burstView, error) {
	cat, names, playing := r.lend(sc, nil)
	plan := engine.Plan{
		Scenario:  sc,
		Catalog:   cat,
		Targets:   names,
		Requests:  n,
		Trace:     true,
		RealClock: true,
	}
	// With the switch on, the burst lands on stores under load, as racelab
	// run --background fires its trials: the load runs on each store from
	// before its trial to after it, in place of the load between bursts.
	var bg *load.Runner
	if p := r.load.pause(); p.Rate > 0 {
		bg = load.New(p, sc)
		plan.Background = bg.Start
	}
	res, err := engine.Run(ctx, plan)
	r.load.resume()
	if err != nil {
		return nil, err
	}
	if res.Interrupted {
		return nil, context.Cause(ctx)
	}
	short := map[string]results.Shortfall{}
	for _, s := range res.Shortfalls() {
		short[s.Target] = s
	}
	labels := results.Labels(res.Targets)
	loads := map[string]load.Summary{}
	if bg != nil {
		for _, s := range bg.Summaries() {
			loads[s.Target] = s
		}
	}
	view := &burstView{Story: sc.Name, Requests: n, At: r.board.now().Format("15:04:05")}
	sql := r.story(sc.Name) != nil && r.story(sc.Name).sql
	var parts []replayPart // a SQL race's replay: this trial, database by database
	for i := range res.Targets {
		tr := &res.Targets[i]
		bs := burstStore{Store: tr.Target, Target: playing[i].target.Name(), Expect: string(tr.Expect)}
		if s, ok := loads[labels[i]]; ok {
			bs.Background, bs.BackgroundLine = &s, summaryLine(s)
		}
		if len(tr.Trials) == 0 {
			bs.Verdict = "could not run"
			bs.Failure = tr.Error
			view.Stores = append(view.Stores, bs)
			continue
		}
		t := &tr.Trials[0]
		bs.Allowed, bs.Refused, bs.Errors, bs.Counted, bs.Broken = t.Allowed, t.Refused, t.Errors, t.Counted, t.Broken
		bs.Account = sc.Account(t, tr.Target)
		bs.Verdict = verdict(tr, t, short[labels[i]])
		if t.ReleaseSpread > 0 {
			bs.Spread = "released within " + formatDuration(t.ReleaseSpread)
		}
		l := drawLanes(sc, t, tr.Target, tr.Clock)
		bs.Lanes = l.svg
		if sql {
			// Transactions on a database: no key for the board to read
			// back, the rule's verdict in the race's words.
			bs.Verdict, bs.Transactions = raceVerdict(t), transactions(t)
			parts = append(parts, replayPart{Heading: tr.Target + " (" + bs.Target + ")", Target: tr.Target, Outcome: bs.Verdict + " · " + bs.Account, Lanes: l.svg, Steps: l.steps})
			view.Stores = append(view.Stores, bs)
			continue
		}
		view.Stores = append(view.Stores, bs)
		r.board.noteBurst(sc.Name, tr.Target, t, bs.Account)
	}
	if sql {
		r.keepReplay(sc, parts)
	}
	return view, nil
}

// lend lends the stores that play sc (only the one given, if any) to the
// engine as shared catalog entries: it prepares and fires at each exactly
// as racelab run does, and leaves it open. It answers the catalog, the
// stores' labels as targets, and the stores, in the room's order.
func (r *Room) lend(sc *engine.Scenario, only *served) (*targets.Catalog, []string, []*served) {
	var entries []targets.Entry
	var names []string
	var playing []*served
	for _, s := range r.stores {
		if !sc.Plays(s.target.Store) || only != nil && s != only {
			continue
		}
		e := s.target.Entry
		store := s.target.Store
		e.Name, e.Shared = s.label, true
		e.Open = func(context.Context, targets.Spec, targets.Options) (any, error) { return store, nil }
		entries = append(entries, e)
		names = append(names, s.label)
		playing = append(playing, s)
	}
	return targets.NewCatalog(entries...), names, playing
}

// verdict says in words, never by colour alone, how a store did: the
// run's own verdict (Result.Shortfalls) first, then what the trial shows.
func verdict(tr *results.TargetResult, t *results.Trial, s results.Shortfall) string {
	switch {
	case s.Why != "" && s.Kind == results.RuleShortfall:
		return "✗ BROKEN, and it had to hold"
	case s.Why != "" && s.Kind == results.InconclusiveShortfall:
		return "? inconclusive: a request failed, so this burst proves nothing"
	case s.Why != "":
		return "could not run"
	case t.Broken && tr.Expect == results.ExpectBreak:
		return "✗ broken, as a naive store does"
	case t.Broken:
		return "✗ broken"
	case t.Inconclusive():
		return "? inconclusive: a request failed, so this burst proves nothing"
	default:
		return "✓ held"
	}
}
