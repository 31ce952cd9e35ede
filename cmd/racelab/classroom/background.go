package classroom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// DefaultMaxBackground is the highest rate the page's background load
// may be set to: a room with --public could set any, and the load runs on
// the machine serving the room.
const DefaultMaxBackground pace.Rate = 1000

// Why the switch went off, as the page shows it.
const (
	offAsked = "turned off"
	offLeft  = "turned off: no classroom page is open any more"
	// msgNoPage refuses a switch no page watches: nothing would be left
	// to turn it off, and leaving the page is what stops it.
	msgNoPage = "background load: no classroom page is open to show it; open the page, and the load stops when the last page closes"
)

// pageWords name a plan's fields as the page says them, as cmd says them
// as flags: the engine's reason for refusing a load is the page's too.
var pageWords = map[string]string{"Background": "background load", "RealClock": "the real clock", "BackgroundKeys": "background keys"}

func sayOnPage(err error) string {
	var fe *usage.FieldError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	return fe.Say(func(f string) string {
		if w, ok := pageWords[f]; ok {
			return w
		}
		return f
	})
}

// backgroundView is the switch as every page shows it.
type backgroundView struct {
	On   bool   `json:"on"`
	Rate string `json:"rate,omitempty"`
	// Stores say where the load runs while on, each with the story whose
	// requests it sends between bursts.
	Stores []string `json:"stores,omitempty"`
	// Why says why it is off, once it was on or refused.
	Why string `json:"why,omitempty"`
}

// backgroundRequest is what the page's switch posts.
type backgroundRequest struct {
	On   bool   `json:"on"`
	Rate string `json:"rate"`
}

// storeLoad is where the switch loads: a store, and the story whose
// requests it sends there between bursts (the first on the page with a
// button that the store plays). A burst loads its own stores with its
// own story's requests, as racelab run --background does.
type storeLoad struct {
	s  *served
	sc *engine.Scenario
}

// loadSwitch is the page's "background load" switch. While it is on and
// a page is open, scenarios/background's load runs on every store the
// page shows; a burst fired meanwhile pauses it, fires with a load of its
// own around its trial (engine.Plan.Background), whose Summary the page
// shows beside the verdict, and resumes it. Turning the switch off,
// closing the last page, or the room's context ending stops the load, and
// the first two return only once its every goroutine has.
type loadSwitch struct {
	ctx   context.Context // the room's
	loads []storeLoad
	max   pace.Rate
	show  func(backgroundView)
	lend  func(sc *engine.Scenario, only *served) (*targets.Catalog, []string, []*served)

	op sync.Mutex // held through each change of the switch: one at a time

	mu       sync.Mutex
	plan     load.Plan // Rate 0: off
	why      string
	pages    int  // open event streams
	bursting bool // a burst runs: the idle load waits for it
	cancel   context.CancelFunc
	done     chan struct{} // closed when the idle load has stopped
}

// newLoadSwitch is the switch of r's stores, the room's context its
// load's, at most most (zero: DefaultMaxBackground). Each store is loaded
// with the requests of the first story on the page with a button that it
// plays; a store that plays none is not loaded.
func newLoadSwitch(ctx context.Context, r *Room, most pace.Rate) *loadSwitch {
	sw := &loadSwitch{ctx: ctx, max: most, show: r.board.setBackground, lend: r.lend}
	if sw.max <= 0 {
		sw.max = DefaultMaxBackground
	}
	for _, s := range r.stores {
		for _, p := range r.pages {
			// A SQL race's database takes no contract's load.
			if p.notBurst == "" && !p.sql && p.sc.Plays(s.target.Store) {
				sw.loads = append(sw.loads, storeLoad{s, p.sc})
				break
			}
		}
	}
	return sw
}

// switchBackground answers POST /classroom/background: {"on":true,
// "rate":"200/s"} turns the load on, {"on":false} off. A rate the load
// cannot take, or a store it cannot run on (one in virtual time, which
// has no rate), is refused with the reason racelab run gives, and the
// switch stays off.
func (r *Room) switchBackground(w http.ResponseWriter, req *http.Request) {
	var br backgroundRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxBurstReq))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&br); err != nil {
		server.WriteError(w, http.StatusBadRequest, `want {"on":true,"rate":"200/s"} or {"on":false}: `+err.Error())
		return
	}
	view, code, err := r.load.set(br)
	if err != nil {
		server.WriteError(w, code, err.Error())
		return
	}
	server.WriteJSON(w, http.StatusOK, view)
}

// set turns the switch as br asks, and says what it came to; an error is
// a refusal, with its status.
func (sw *loadSwitch) set(br backgroundRequest) (backgroundView, int, error) {
	sw.op.Lock()
	defer sw.op.Unlock()
	if !br.On {
		return sw.stop(offAsked), 0, nil
	}
	plan, err := load.Parse(br.Rate, 0, false)
	if err == nil && plan.Rate > sw.max {
		err = usage.Fieldf("Background", "{} %v: want at most %v on this page", plan.Rate, sw.max)
	}
	if err != nil {
		return backgroundView{}, http.StatusBadRequest, errors.New(sayOnPage(err))
	}
	if err := sw.check(); err != nil {
		sw.stop(sayOnPage(err))
		return backgroundView{}, http.StatusConflict, errors.New(sayOnPage(err))
	}
	sw.stop("") // a new rate replaces the load at the old one
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.pages == 0 {
		return backgroundView{}, http.StatusConflict, errors.New(msgNoPage)
	}
	sw.plan, sw.why = plan, ""
	sw.startIdle()
	return sw.viewLocked(), 0, nil
}

// check asks the engine whether each store can take a load: one in
// virtual time cannot (the reason racelab run gives).
func (sw *loadSwitch) check() error {
	for _, l := range sw.loads {
		if err := engine.RefuseBackground(l.s.label, l.s.target); err != nil {
			return err
		}
	}
	return nil
}

// stop turns the switch off, saying why ("" keeps what it said), and
// returns once the load has stopped. The caller holds op.
func (sw *loadSwitch) stop(why string) backgroundView {
	sw.mu.Lock()
	sw.plan = load.Plan{}
	if why != "" {
		sw.why = why
	}
	wait := sw.stopIdle()
	sw.mu.Unlock()
	wait()
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.viewLocked()
}

// pageOpened and pageClosed count the pages open (their event streams):
// when the last one closes the load stops, since nobody is left to see it
// or to turn it off.
func (sw *loadSwitch) pageOpened() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.pages++
}

func (sw *loadSwitch) pageClosed() {
	sw.mu.Lock()
	sw.pages--
	last := sw.pages == 0 && sw.plan.Rate > 0
	sw.mu.Unlock()
	if last {
		sw.op.Lock()
		defer sw.op.Unlock()
		sw.mu.Lock()
		still := sw.pages == 0 // a page may have opened meanwhile
		sw.mu.Unlock()
		if still {
			sw.stop(offLeft)
		}
	}
}

// pause stops the idle load for a burst and says the plan of the burst's
// own load: the zero Plan when the switch is off. resume must follow.
func (sw *loadSwitch) pause() load.Plan {
	sw.mu.Lock()
	sw.bursting = true
	plan := sw.plan
	wait := sw.stopIdle()
	sw.mu.Unlock()
	wait()
	return plan
}

// resume starts the idle load again after a burst, if the switch is
// still on.
func (sw *loadSwitch) resume() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.bursting = false
	sw.startIdle()
}

// startIdle starts the load between bursts if it should run and does not;
// the caller holds mu.
func (sw *loadSwitch) startIdle() {
	defer func() { sw.show(sw.viewLocked()) }()
	if sw.plan.Rate <= 0 || sw.bursting || sw.pages == 0 || sw.cancel != nil || sw.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(sw.ctx)
	done := make(chan struct{})
	sw.cancel, sw.done = cancel, done
	plan := sw.plan
	go func() {
		defer close(done)
		var stops []func()
		for _, l := range sw.loads {
			if ctx.Err() != nil {
				break
			}
			stops = append(stops, load.New(plan, l.sc).Start(ctx, l.s.label, l.s.target, engine.Player{}, nil))
		}
		<-ctx.Done()
		for _, stop := range stops {
			stop()
		}
	}()
}

// stopIdle stops the load between bursts and returns what waits until it
// has stopped, to be called without mu.
func (sw *loadSwitch) stopIdle() (wait func()) {
	defer func() { sw.show(sw.viewLocked()) }()
	if sw.cancel == nil {
		return func() {}
	}
	sw.cancel()
	done := sw.done
	sw.cancel, sw.done = nil, nil
	return func() { <-done }
}

// viewLocked is the switch as the page shows it; the caller holds mu.
func (sw *loadSwitch) viewLocked() backgroundView {
	v := backgroundView{On: sw.plan.Rate > 0, Why: sw.why}
	if v.On {
		v.Rate = sw.plan.Rate.String()
		for _, l := range sw.loads {
			v.Stores = append(v.Stores, fmt.Sprintf("%s (%s)", l.s.label, l.sc.Name))
		}
	}
	return v
}

// summaryLine is s as racelab run's report says it, in one line.
func summaryLine(s load.Summary) string {
	var b strings.Builder
	_ = load.Write(&b, []load.Summary{s}) // a Builder does not fail
	return strings.TrimSuffix(b.String(), "\n")
}
