package classroom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/story"
)

// How the board keeps the page current.
const (
	// refresh is the shortest gap between two snapshots sent to one page:
	// a burst of a thousand requests from a student's racelab run becomes
	// a few redraws, not a thousand.
	refresh = 100 * time.Millisecond
	// readEvery and settle: a key is read back from its stores every
	// readEvery until settle after its last request, so that a write the
	// store applies late (the KV simulator's writes land after their
	// latency) still shows, and a quiet board reads nothing.
	readEvery = 200 * time.Millisecond
	settle    = 3 * time.Second
	// readTimeout bounds one read of a key, so that a stuck store cannot
	// hold the board.
	readTimeout = 2 * time.Second
	// heartbeat keeps an idle event stream open through anything that
	// closes quiet connections.
	heartbeat = 20 * time.Second
	// maxAnswer is how much of an answer the log keeps: the contract's
	// answers are a line of JSON.
	maxAnswer = 200
)

// route is one of the contract's keyed routes as the board reads it.
type route struct {
	op    story.OpSpec // the op whose key it touches
	act   bool         // it asks for something (hit, download, checkout); else it reads
	field string       // the answer's JSON field holding the number, "" for none
	// no are the statuses that refuse what was asked (a download over the
	// quota, an item taken), as the op's row lists them.
	no []int
	// scope, when set, is a query parameter that makes a read another
	// key's than the board's: GET /limit/{caller}?window=w reads one
	// window, the board the current one.
	scope string
	// plan says what a 200 did to the plan (stale-plan): "subscribed",
	// "cancelled", or readPlan for a read of it.
	plan string
}

// readPlan is the plan of the route that reads the plan, whose answer
// says in "paid" whether it is paid.
const readPlan = "read"

// planCalls are stale-plan's calls around its request, which are no op's
// own (httpapi's subscribe, cancel and plan): what a 200 of each did to
// the plan.
var planCalls = map[string]string{"subscribe": "subscribed", "cancel": "cancelled", "plan": readPlan}

// routesOf are the keyed routes of an ops table (design.md §7), by the
// first word of their path, or by method and word where one path both
// asks (POST) and reads (GET).
func routesOf(ops story.Table) map[string]route {
	out := map[string]route{}
	for _, s := range ops.Specs() {
		act, read := firstWord(s.Route), firstWord(s.ReadRoute)
		out[act] = route{op: s, act: true, field: s.Field, no: s.Refused}
		if read == act {
			read = "GET " + read
		}
		_, query, _ := strings.Cut(s.ReadRoute, "?")
		scope, _, _ := strings.Cut(query, "=")
		out[read] = route{op: s, field: s.ReadField, scope: scope}
	}
	if original, ok := ops.Spec(story.OpOriginal); ok {
		for word, plan := range planCalls {
			out[word] = route{op: original, plan: plan}
		}
	}
	return out
}

// firstWord is the first segment of a path: "hit" of /hit/{slug}.
func firstWord(path string) string {
	w, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return w
}

// lookupRoute finds the route of a request by its method and the first
// word of its path.
func (b *board) lookupRoute(method, word string) (route, bool) {
	if method == http.MethodGet || method == http.MethodHead {
		if rt, ok := b.routes["GET "+word]; ok {
			return rt, true
		}
	}
	rt, ok := b.routes[word]
	return rt, ok
}

// call is one line of curl a story's example shows, below a store's base.
type call struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// storyPage is what the page shows of one story's requests.
type storyPage struct {
	sc *engine.Scenario
	op story.OpSpec // the story's request, its row of the ops table
	// limit is the limit the story's requests carry: its own, or its op's
	// default (none for an op without a limit).
	limit int64
	// calls are the curl lines to try, in order.
	calls []call
	// notBurst, when set, is why the story has no "fire N at once"
	// button, and runFlags the flags of the racelab run that plays it
	// instead on the page's stores in a minute or so.
	notBurst, runFlags string
	// sql marks a SQL race's page (Config.Race): its trials are
	// transactions on databases, with no keys for the board to read.
	sql bool
}

// originalPage is what the page shows of a story of stale-plan's request
// beyond its op's row: its calls around the request, and the run that
// plays it, since it has no button.
var originalPage = storyPage{
	// A page read of the plan before the cancel warms a caching store's
	// read, so that the original after the cancel meets it.
	calls: []call{{"POST", "/subscribe/grace"}, {"GET", "/plan/grace"}, {"POST", "/original/grace"}, {"POST", "/cancel/grace"},
		{"POST", "/original/grace"}, {"GET", "/plan/grace"}, {"GET", "/original/grace"}},
	// Its trial is a subscription, pages read, a cancel, then downloads
	// arriving for minutes (a stream, not a burst): on the real clock that
	// is minutes a press, unless the story is shortened, as README's
	// "Over HTTP" does.
	notBurst: "plays over minutes, not at once (a subscription, a cancel, then downloads arriving for minutes)",
	runFlags: "--bound 2s --for 2s --rate 10/s --arrivals even --trials 3"}

// pageOf is what the page shows of sc, whose request is op: the request
// then the read on the op's example key, each with the story's limit
// where it is not the op's default, so that the curl lines play the story
// and land in its rows. Such a story's example key ends in its limit
// (ada-3), so that its lines and those of the op's default story count
// apart.
func pageOf(sc *engine.Scenario, op story.OpSpec) storyPage {
	p := storyPage{sc: sc, op: op, limit: sc.Limit}
	if op.Limit == "" {
		p.limit = 0
	} else if p.limit <= 0 {
		p.limit = op.DefaultLimit
	}
	if op.Op == story.OpOriginal {
		p.calls, p.notBurst, p.runFlags = originalPage.calls, originalPage.notBurst, originalPage.runFlags
		return p
	}
	ex := "/" + url.PathEscape(op.Words.Example)
	if op.Carries(p.limit) {
		ex += fmt.Sprintf("-%d?%s=%d", p.limit, op.Limit, p.limit)
	}
	p.calls = []call{{op.Method, "/" + firstWord(op.Route) + ex}, {http.MethodGet, "/" + firstWord(op.ReadRoute) + ex}}
	return p
}

// holds says whether a request of the page's op belongs to its story: it
// carries the story's limit, or says none and the story keeps its op's
// default. A request of an op without a limit belongs to every story of
// it.
func (p storyPage) holds(req *http.Request) bool {
	if p.op.Limit == "" {
		return true
	}
	v := req.URL.Query().Get(p.op.Limit)
	if v == "" {
		return p.limit == p.op.DefaultLimit
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return err == nil && n == p.limit
}

// liveWindow is the rate limit racelab serve's contract keeps (httpapi's
// serveWindow): the board reads a caller's count in its current window,
// as GET /limit/{caller} does.
var liveWindow = story.Window{Limit: story.WindowLimit, Length: story.WindowLength}

// errNotPlayed: the store does not play the story whose key was asked.
var errNotPlayed = errors.New("the store does not play this story")

// readKey reads what store holds for key in the story of op: the views,
// today's downloads, the claims, the count of the window that holds now,
// today's originals, or the count of an op of a story's own.
func readKey(ctx context.Context, store any, op story.Op, key string, now time.Time) (int64, error) {
	switch op {
	case story.OpHit:
		if c, ok := store.(story.Counter); ok {
			return c.Views(ctx, key)
		}
	case story.OpDownload:
		if q, ok := store.(story.Quota); ok {
			return q.Count(ctx, key)
		}
	case story.OpCheckout:
		if inv, ok := store.(story.Inventory); ok {
			return inv.Claims(ctx, key)
		}
	case story.OpLimit:
		if l, ok := store.(story.Limiter); ok {
			return l.Admitted(ctx, key, liveWindow, liveWindow.Number(now))
		}
	case story.OpOriginal:
		if p, ok := store.(story.Plans); ok {
			return p.Downloads(ctx, key)
		}
	default:
		if c, ok := store.(story.Capped); ok {
			return c.Taken(ctx, op, key)
		}
	}
	return 0, errNotPlayed
}

// board is what the page shows of the stores' traffic: the latest
// requests, the latest keys of each story with what each store answered
// and holds, the last burst of each story. Every change bumps seq and
// wakes the event streams.
type board struct {
	now    func() time.Time
	stores []*served
	pages  []storyPage      // the stories shown, in order
	routes map[string]route // the ops table's routes (routesOf)
	kick   chan struct{}    // a key was touched: read keys back

	mu      sync.Mutex
	seq     int64
	total   int64
	log     []logLine // oldest first, at most LogLines
	rows    map[string][]*row
	bursts  map[string]*burstView
	firing  string         // the story whose burst is running, if any
	load    backgroundView // the background switch, as pages show it
	changed chan struct{}  // closed at the next change
	cache   []byte         // the snapshot of cacheSeq
	cacheAt int64
}

// logLine is one request as the page lists it, with what it was answered.
type logLine struct {
	At     string `json:"at"`
	Store  string `json:"store"`
	Method string `json:"method"`
	URI    string `json:"uri"`
	Status int    `json:"status"`
	Answer string `json:"answer"`
	// Burst, for a burst fired from the page, is how many requests it
	// sent at once to Store on Key: one line, not a curl line each.
	Burst int    `json:"burst,omitempty"`
	Key   string `json:"key,omitempty"`
}

// row is one key of a story, with a cell per store it reached.
type row struct {
	Key     string           `json:"key"`
	Cells   map[string]*cell `json:"cells"`
	touched time.Time
}

// cell is what one store did with one key.
type cell struct {
	Requests int `json:"requests"`
	// Allowed and Refused count the requests that asked (a hit, a
	// download, a checkout) by what they were told; Reads the reads;
	// Failed the answers outside those (a 500, a 503).
	Allowed int `json:"allowed"`
	Refused int `json:"refused"`
	Reads   int `json:"reads"`
	Failed  int `json:"failed"`
	// Answered is the number the store last answered a request with: the
	// views after a hit, the count after a download.
	Answered *int64 `json:"answered,omitempty"`
	// Stored is what the store holds, read back after the requests.
	Stored    *int64 `json:"stored,omitempty"`
	ReadError string `json:"read_error,omitempty"`
	// Plan is what the store was last told of the key's plan
	// ("subscribed", "cancelled"), and PlanRead what a read of the plan
	// answered since ("paid", "not paid"): a cancelled plan read as paid
	// is stale-plan's stale read (stale-plan only).
	Plan     string `json:"plan,omitempty"`
	PlanRead string `json:"plan_read,omitempty"`
}

// newBoard is the board of pages, whose ops are rows of ops. Its rows
// are kept by story, so that two stories of one op (six-become-four and a
// three-a-day quota) each show their own keys.
func newBoard(now func() time.Time, stores []*served, pages []storyPage, ops story.Table) *board {
	return &board{now: now, stores: stores, pages: pages, routes: routesOf(ops), kick: make(chan struct{}, 1),
		rows: map[string][]*row{}, bursts: map[string]*burstView{}, changed: make(chan struct{})}
}

// bump marks a change; the caller holds mu.
func (b *board) bump() {
	b.seq++
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *board) requests() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// watch serves contract and notes each answered request on the board,
// after the contract has answered it: the store is told exactly what it
// would be told without the page.
func (b *board) watch(s *served, contract http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c := &capture{ResponseWriter: w}
		contract.ServeHTTP(c, req)
		b.landed(s, req, c.status, c.body)
	})
}

// landed notes one answered request. The index (every racelab run warms
// its connections with it) and /stats are not part of any story and stay
// off the board.
func (b *board) landed(s *served, req *http.Request, status int, answer []byte) {
	first, rest, keyed := strings.Cut(strings.TrimPrefix(req.URL.EscapedPath(), "/"), "/")
	if first == "" || first == "stats" {
		return
	}
	now := b.now()
	line := logLine{At: now.Format("15:04:05"), Store: s.label, Method: req.Method, URI: req.RequestURI,
		Status: status, Answer: strings.TrimSpace(string(answer))}
	if len(line.Answer) > maxAnswer {
		line.Answer = line.Answer[:maxAnswer] + "…"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total++
	b.log = append(b.log, line)
	if len(b.log) > LogLines {
		b.log = slices.Delete(b.log, 0, len(b.log)-LogLines)
	}
	rt, known := b.lookupRoute(req.Method, first)
	if rt.scope != "" && req.URL.Query().Has(rt.scope) {
		rt.field = "" // a read of another window than the board's
	}
	key, err := url.PathUnescape(rest)
	if known && keyed && err == nil && key != "" && !strings.Contains(rest, "/") {
		for _, name := range b.storiesOf(rt, key, req) {
			b.note(name, key, s.label, rt, status, answer, now)
		}
	}
	b.bump()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// storiesOf names the stories a request of rt on key belongs to: those
// of its op held to the limit it carries (the op's default when it says
// none). A read, or a call around the request (stale-plan's plan), that
// says no limit belongs to whichever of its op's stories shows key
// already, and only to the default one when none does: a three-a-day
// story's reads say no limit, and must not start rows of the quota's.
// The caller holds mu.
func (b *board) storiesOf(rt route, key string, req *http.Request) []string {
	var names, showing []string
	for _, p := range b.pages {
		if p.op.Op != rt.op.Op {
			continue
		}
		if slices.ContainsFunc(b.rows[p.sc.Name], func(r *row) bool { return r.Key == key }) {
			showing = append(showing, p.sc.Name)
		}
		if p.holds(req) {
			names = append(names, p.sc.Name)
		}
	}
	if !rt.act && len(showing) > 0 && (rt.op.Limit == "" || !req.URL.Query().Has(rt.op.Limit)) {
		return showing
	}
	return names
}

// note counts one request on key in its cell; the caller holds mu. A
// request the contract refused before the store saw it (a bad key, a
// story the store does not play) makes no row.
func (b *board) note(storyName, key, store string, rt route, status int, answer []byte, now time.Time) {
	refused := rt.act && slices.Contains(rt.no, status)
	reached := status == http.StatusOK || refused || status >= 500
	if !reached && !slices.ContainsFunc(b.rows[storyName], func(r *row) bool { return r.Key == key }) {
		return
	}
	c := b.cellFor(storyName, key, store, now)
	c.Requests++
	switch {
	case status == http.StatusOK && rt.act:
		c.Allowed++
	case status == http.StatusOK:
		c.Reads++
	case refused:
		c.Refused++
	default:
		c.Failed++
	}
	switch {
	case status != http.StatusOK || rt.plan == "":
	case rt.plan == readPlan:
		// A plan read as not paid is an answer, not a failure.
		if paid, ok := answerBool(answer, "paid"); ok {
			c.PlanRead = map[bool]string{true: "paid", false: "not paid"}[paid]
		}
	default:
		// A read before this change says nothing of the plan after it.
		c.Plan, c.PlanRead = rt.plan, ""
	}
	// A 403 is stale-plan's refusal for want of a paid plan, before any
	// count was read: its count is no count.
	if rt.field != "" && (status == http.StatusOK || refused && status != http.StatusForbidden) {
		if n, ok := answerNumber(answer, rt.field); ok {
			if rt.act {
				c.Answered = &n
			} else {
				c.Stored = &n // a read of the contract is a read of the store
			}
		}
	}
}

// cellFor is store's cell in key's row of the story, the row moved to
// the top of the board (made if new, the oldest dropped past KeysShown)
// and marked touched now, so that it is read back. The caller holds mu.
func (b *board) cellFor(storyName, key, store string, now time.Time) *cell {
	rows := b.rows[storyName]
	var r *row
	if i := slices.IndexFunc(rows, func(r *row) bool { return r.Key == key }); i >= 0 {
		r = rows[i]
		rows = slices.Delete(rows, i, i+1)
	} else {
		r = &row{Key: key, Cells: map[string]*cell{}}
	}
	b.rows[storyName] = append([]*row{r}, rows[:min(len(rows), KeysShown-1)]...)
	r.touched = now
	c := r.Cells[store]
	if c == nil {
		c = &cell{}
		r.Cells[store] = c
	}
	return c
}

// answerNumber is the whole number in field of a JSON answer.
func answerNumber(answer []byte, field string) (int64, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(answer, &m) != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(m[field]), 10, 64)
	return n, err == nil
}

// answerBool is the JSON boolean in field of an answer.
func answerBool(answer []byte, field string) (bool, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(answer, &m) != nil {
		return false, false
	}
	var v bool
	return v, json.Unmarshal(m[field], &v) == nil
}

// keyRead is one read of one key from one store, for readKeys.
type keyRead struct {
	story, key, store string
	op                story.Op
	from              any
	n                 int64
	err               error
}

// readKeys reads back the keys touched lately from the stores that were
// sent them, until ctx ends. It sleeps while nothing is touched.
func (b *board) readKeys(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		for {
			due := b.due()
			if len(due) == 0 {
				break
			}
			for i := range due {
				rctx, cancel := context.WithTimeout(ctx, readTimeout)
				due[i].n, due[i].err = readKey(rctx, due[i].from, due[i].op, due[i].key, b.now())
				cancel()
			}
			if ctx.Err() != nil {
				return
			}
			b.stored(due)
			select {
			case <-ctx.Done():
				return
			case <-time.After(readEvery):
			}
		}
	}
}

// due lists the reads of every key touched within settle.
func (b *board) due() []keyRead {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	var out []keyRead
	for _, p := range b.pages {
		name, op := p.sc.Name, p.op.Op
		for _, r := range b.rows[name] {
			if now.Sub(r.touched) > settle {
				continue
			}
			for _, s := range b.stores {
				if _, ok := r.Cells[s.label]; ok {
					out = append(out, keyRead{story: name, key: r.Key, store: s.label, op: op, from: s.target.Store})
				}
			}
		}
	}
	return out
}

// stored puts what the reads found on the board, and bumps it if that
// changed anything.
func (b *board) stored(reads []keyRead) {
	b.mu.Lock()
	defer b.mu.Unlock()
	changed := false
	for _, rd := range reads {
		i := slices.IndexFunc(b.rows[rd.story], func(r *row) bool { return r.Key == rd.key })
		if i < 0 {
			continue // pushed off the board meanwhile
		}
		c := b.rows[rd.story][i].Cells[rd.store]
		msg := ""
		if rd.err != nil {
			// The page is on a projector: what failed goes to serve's
			// log through the contract, not to the room.
			msg = "could not read"
		}
		if c.ReadError != msg || rd.err == nil && (c.Stored == nil || *c.Stored != rd.n) {
			changed = true
		}
		c.ReadError = msg
		if rd.err == nil {
			n := rd.n
			c.Stored = &n
		}
	}
	if changed {
		b.bump()
	}
}

// snapshot is the board as JSON, the sequence number it has, and a
// channel closed at the next change.
func (b *board) snapshot() ([]byte, int64, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cache == nil || b.cacheAt != b.seq {
		log := slices.Clone(b.log)
		slices.Reverse(log)
		out := struct {
			Seq      int64                 `json:"seq"`
			Requests int64                 `json:"requests"`
			Log      []logLine             `json:"log"`
			Keys     map[string][]*row     `json:"keys"`
			Bursts   map[string]*burstView `json:"bursts"`
			Firing   string                `json:"firing"`
			Load     backgroundView        `json:"background"`
		}{b.seq, b.total, log, b.rows, b.bursts, b.firing, b.load}
		if out.Log == nil {
			out.Log = []logLine{}
		}
		data, err := json.Marshal(out)
		if err != nil { // plain data: cannot happen
			data = []byte(`{"error":"snapshot"}`)
		}
		b.cache, b.cacheAt = data, b.seq
	}
	return b.cache, b.seq, b.changed
}

// noteBurst puts one store's part of a burst fired from the page on the
// board as the room's own requests are: in the keys table (a row for the
// trial's key, read back like any touched key) and as one line of the
// request log. The burst goes to the stores through the engine, not the
// contract, so watch never sees it.
func (b *board) noteBurst(storyName, store string, t *results.Trial, account string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	c := b.cellFor(storyName, t.Key, store, now)
	c.Requests += len(t.Requests)
	c.Allowed += t.Allowed
	c.Refused += t.Refused
	c.Failed += t.Errors
	counted := t.Counted
	c.Stored = &counted
	b.total += int64(len(t.Requests))
	b.log = append(b.log, logLine{At: now.Format("15:04:05"), Store: store, Burst: len(t.Requests), Key: t.Key, Answer: account})
	if len(b.log) > LogLines {
		b.log = slices.Delete(b.log, 0, len(b.log)-LogLines)
	}
	b.bump()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// setFiring shows every page that a burst of the story is running.
func (b *board) setFiring(storyName string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.firing = storyName
	b.bump()
}

// setBurst records the story's burst as done, and what it came to (nil:
// it was not fired, and the last one stays).
func (b *board) setBurst(storyName string, view *burstView) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.firing = ""
	if view != nil {
		b.bursts[storyName] = view
	}
	b.bump()
}

// setBackground shows every page the background switch as it is now.
// A burst pauses and resumes the switch's load; with the switch off that
// changes nothing on the page, and sends no snapshot.
func (b *board) setBackground(v backgroundView) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v.On == b.load.On && v.Rate == b.load.Rate && v.Why == b.load.Why && slices.Equal(v.Stores, b.load.Stores) {
		return
	}
	b.load = v
	b.bump()
}

// events streams the board to a page as Server-Sent Events: a snapshot
// at once, then one after each change, at most one every refresh. It ends
// when the page goes or the room's context ends (serve stopping), so that
// no open page holds serve's shutdown. Streams have a cap of their own
// (guarded.Stream): one more is answered 503, and a stream never takes a
// connection a store's request needs.
func (r *Room) events(w http.ResponseWriter, req *http.Request) {
	done, ok := server.Stream(w, req)
	if !ok {
		return
	}
	defer done()
	r.load.pageOpened()
	defer r.load.pageClosed()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	for {
		data, seq, changed := r.board.snapshot()
		if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", seq, data); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		for waiting := true; waiting; {
			select {
			case <-changed:
				waiting = false
			case <-req.Context().Done():
				return
			case <-r.ctx.Done():
				return
			case <-time.After(heartbeat):
				if _, err := io.WriteString(w, ": still here\n\n"); err != nil || rc.Flush() != nil {
					return
				}
			}
		}
		select {
		case <-time.After(refresh):
		case <-req.Context().Done():
			return
		case <-r.ctx.Done():
			return
		}
	}
}

// capture passes an answer through and keeps its status and the start of
// its body for the board.
type capture struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (c *capture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if room := maxAnswer + 1 - len(c.body); room > 0 {
		c.body = append(c.body, p[:min(room, len(p))]...)
	}
	return c.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *capture) Unwrap() http.ResponseWriter { return c.ResponseWriter }
