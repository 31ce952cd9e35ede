package classroom

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/story"
)

// Defaults of a Room, in one place.
const (
	// DefaultBurstEvery is the shortest gap between two bursts fired from
	// the page, whoever presses the button: a room pressing it in a loop
	// gets 429s, not a busy machine.
	DefaultBurstEvery = 2 * time.Second
	// DefaultMaxBurst is the most requests a burst from the page sends to
	// each store. A class needs ten or twelve to see the race; racelab
	// run is there for wider bursts.
	DefaultMaxBurst = 100
	// KeysShown is how many keys of a story the page shows, the latest
	// first: what fits on a projector.
	KeysShown = 6
	// LogLines is how many landed requests the page lists, the latest
	// first.
	LogLines = 30
)

// Prefix is where the page and its API live, the one path a store may
// not be named after besides the contract's own routes.
const Prefix = "/classroom/"

// Store is one store serve serves, with the contract already built over
// it.
type Store struct {
	// Name is the store's path prefix: "naive" serves the contract under
	// /naive/. Empty serves the one store of the room at the root, as
	// `racelab serve --store kv` always has.
	Name string
	// Target is the opened store. The room reads its keys for the page and
	// fires the page's bursts at it; it never closes it.
	Target *targets.Target
	// Contract serves racelab's HTTP contract over Target's store (an
	// *handler.Handler); the room routes to it unchanged. It is nil for a
	// database of a SQL race (Config.Race), which serves no contract.
	Contract http.Handler
}

// Config is what a Room serves and how.
type Config struct {
	// Stores are the stores, in the order the page shows them: one
	// unnamed store, or any number of named ones.
	Stores []Store
	// Addrs are HOST:PORT addresses students can reach the server at,
	// for the curl lines the page prints; empty lets the page use the
	// address it was opened at.
	Addrs []string
	// BurstEvery and MaxBurst bound the page's bursts; zero means
	// DefaultBurstEvery and DefaultMaxBurst.
	BurstEvery time.Duration
	MaxBurst   int
	// MaxBackground is the highest rate the page's background load
	// switch takes; zero means DefaultMaxBackground.
	MaxBackground pace.Rate
	// Now is the wall clock of the request log, and the one the board
	// reads a rate limit's current window by; nil means time.Now, the
	// clock the contract's handler reads it by as well.
	Now func() time.Time
	// Stories are the stories the page may show, in order; nil means
	// racelab's own (scenarios.All). The page shows those some store
	// plays, each with rows of its own, even where two share an op.
	Stories []*engine.Scenario
	// Ops is the ops table the stories' requests are rows of: the zero
	// Table is the stories' own (story.Ops). A story with an op of its
	// own needs its row here, as the stores' contracts need it
	// (handler.WithOps).
	Ops story.Table
	// Race, when set, is a SQL race file's story (a burst of
	// transaction:), shown instead of the stories over stores that are
	// its databases: its button plays one trial on each, as racelab run
	// FILE -t NAME=URL does. See race.go.
	Race *engine.Scenario
}

// served is one store as the room routes to it.
type served struct {
	name    string // path prefix, "" at the root
	label   string // what the page calls it: its name, or its target
	target  *targets.Target
	handler http.Handler // the contract, watched
}

// Room is the classroom: an http.Handler serving the page, its API and
// the stores' contract. Build it with New.
type Room struct {
	ctx    context.Context
	stores []*served
	pages  []storyPage // the stories some store plays, in the order they are told
	addrs  []string
	mux    *http.ServeMux
	board  *board

	maxBurst int
	limiter  *rate.Limiter
	firing   sync.Mutex // held while a burst runs: one at a time
	load     *loadSwitch

	replayMu sync.Mutex
	replays  map[string][]byte // story → its replay as JSON, computed once
}

var _ http.Handler = (*Room)(nil)

//go:embed page
var page embed.FS

// New builds the room over cfg's stores. Its event streams and bursts end
// when ctx does, so that serve can stop without waiting for a page left
// open; a reader of the stores' keys runs until then.
func New(ctx context.Context, cfg Config) (*Room, error) {
	if len(cfg.Stores) == 0 {
		return nil, errors.New("classroom: no store to serve")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	r := &Room{
		ctx:      ctx,
		addrs:    cfg.Addrs,
		maxBurst: cfg.MaxBurst,
		limiter:  rate.NewLimiter(rate.Every(cfg.BurstEvery), 1),
		replays:  map[string][]byte{},
	}
	if r.maxBurst <= 0 {
		r.maxBurst = DefaultMaxBurst
	}
	if cfg.BurstEvery <= 0 {
		r.limiter = rate.NewLimiter(rate.Every(DefaultBurstEvery), 1)
	}
	seen := map[string]bool{}
	for _, s := range cfg.Stores {
		if s.Target == nil || s.Contract == nil && cfg.Race == nil {
			return nil, errors.New("classroom: a store needs its target and its contract")
		}
		if s.Name == "" && len(cfg.Stores) > 1 {
			return nil, fmt.Errorf("classroom: store %s has no name; name each store when serving several", s.Target.Name())
		}
		if s.Name != "" {
			if err := CheckName(s.Name); err != nil {
				return nil, err
			}
			if seen[s.Name] {
				return nil, fmt.Errorf("classroom: two stores are named %s; give each its own name", s.Name)
			}
			seen[s.Name] = true
		}
		label := s.Name
		if label == "" {
			label = s.Target.Name()
		}
		r.stores = append(r.stores, &served{name: s.Name, label: label, target: s.Target})
	}
	stories := cfg.Stories
	if stories == nil {
		stories = scenarios.All()
	}
	if cfg.Race != nil {
		p, err := racePage(cfg.Race, r.stores)
		if err != nil {
			return nil, err
		}
		r.pages, stories = []storyPage{p}, nil
	}
	for _, sc := range stories {
		op, ok := cfg.Ops.Spec(sc.Op)
		if !ok {
			return nil, fmt.Errorf("classroom: story %s: its op %s is no row of the ops table; hand its row in Config.Ops", sc.Name, sc.Op)
		}
		if r.story(sc.Name) != nil {
			return nil, fmt.Errorf("classroom: two stories are named %s", sc.Name)
		}
		if slices.ContainsFunc(r.stores, func(s *served) bool { return sc.Plays(s.target.Store) }) {
			r.pages = append(r.pages, pageOf(sc, op))
		}
	}
	for _, s := range r.stores {
		for _, op := range cfg.Ops.Specs() {
			if strings.EqualFold(s.name, firstWord(op.Route)) || strings.EqualFold(s.name, firstWord(op.ReadRoute)) {
				return nil, fmt.Errorf("store name %q is a path of op %s (/%s/); pick another, such as naive or fixed", s.name, op.Op, s.name)
			}
		}
	}
	r.board = newBoard(now, r.stores, r.pages, cfg.Ops)
	r.load = newLoadSwitch(ctx, r, cfg.MaxBackground)
	for i, s := range r.stores {
		if c := cfg.Stores[i].Contract; c != nil {
			s.handler = r.board.watch(s, c)
		}
	}
	r.routes()
	go r.board.readKeys(ctx)
	return r, nil
}

// reserved are the names a store may not take: the page's own prefix, and
// the contract's routes, which a store at /hit/ would make ambiguous to
// a reader of the curl lines.
var reserved = []string{"classroom", "hit", "get", "download", "quota", "checkout", "item", "limit",
	"subscribe", "cancel", "plan", "original", "stats"}

// nameWant is what a store's name may be, for every complaint about one.
const nameWant = "want letters, digits, - and _ (up to 40), such as naive or fixed"

// CheckName says what is wrong with name as a store's name, or nil: it
// becomes a path prefix, so it is letters, digits, - and _, and not one
// of the paths the room or the contract already use.
func CheckName(name string) error {
	if !IsName(name) {
		return fmt.Errorf("store name %q: %s", name, nameWant)
	}
	for _, w := range reserved {
		if strings.EqualFold(name, w) {
			return fmt.Errorf("store name %q is a path racelab serve already uses (/%s/); pick another, such as naive or fixed", name, w)
		}
	}
	return nil
}

// IsName says whether s has the form of a store's name (CheckName's
// characters), so that `--store NAME=SPEC` can be told from a spec whose
// own parameters hold "=".
func IsName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// routes lays out the room's paths. The contract's own paths pass
// through untouched: under /NAME/ for a named store, at the root for an
// unnamed one.
func (r *Room) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", r.root)
	mux.HandleFunc(Prefix+"{$}", server.Only(http.MethodGet, r.page))
	mux.HandleFunc(Prefix+"page.js", server.Only(http.MethodGet, r.asset))
	mux.HandleFunc(Prefix+"page.css", server.Only(http.MethodGet, r.asset))
	mux.HandleFunc(Prefix+"config", server.Only(http.MethodGet, r.config))
	mux.HandleFunc(Prefix+"events", server.Only(http.MethodGet, r.events))
	mux.HandleFunc(Prefix+"burst", server.Only(http.MethodPost, r.fire))
	mux.HandleFunc(Prefix+"background", server.Only(http.MethodPost, r.switchBackground))
	mux.HandleFunc(Prefix+"replay", server.Only(http.MethodGet, r.replay))
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, req *http.Request) {
		server.WriteError(w, http.StatusNotFound, fmt.Sprintf("no page %s; the classroom is at /", req.URL.Path))
	})
	for _, s := range r.stores {
		if s.handler == nil {
			continue // a race's database: no contract to route to
		}
		if s.name == "" {
			mux.Handle("/", s.handler)
			continue
		}
		h := mount("/"+s.name, s.handler)
		mux.Handle("/"+s.name, h)
		mux.Handle("/"+s.name+"/", h)
	}
	if r.stores[0].handler == nil || r.stores[0].name != "" {
		mux.HandleFunc("/", r.notFound)
	}
	r.mux = mux
}

// ServeHTTP routes a request to the page, its API or a store.
func (r *Room) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.mux.ServeHTTP(w, req) }

// Requests is how many requests the stores' contracts have answered.
func (r *Room) Requests() int64 { return r.board.requests() }

// root answers GET /: the page to a browser. A client that does not ask
// for HTML (curl, racelab's warm-up) gets JSON as before: the contract's
// index when one store is served at the root, else the stores' bases.
func (r *Room) root(w http.ResponseWriter, req *http.Request) {
	if wantsHTML(req) && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
		r.page(w, req)
		return
	}
	if r.stores[0].name == "" && r.stores[0].handler != nil {
		r.stores[0].handler.ServeHTTP(w, req)
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		server.WriteError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s /: method not allowed; use GET", req.Method))
		return
	}
	stores := map[string]any{}
	for _, s := range r.stores {
		if s.handler == nil {
			stores[s.label] = map[string]string{"target": s.target.Name()} // a database: no base to send to
			continue
		}
		stores[s.name] = map[string]string{"target": s.target.Name(), "base": "/" + s.name + "/"}
	}
	server.WriteJSON(w, http.StatusOK, map[string]any{"service": "racelab serve", "classroom": "/", "stores": stores})
}

func (r *Room) notFound(w http.ResponseWriter, req *http.Request) {
	if r.stores[0].handler == nil {
		server.WriteError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s; the databases serve no HTTP contract, the classroom page is at /", req.Method, req.URL.Path))
		return
	}
	bases := make([]string, len(r.stores))
	for i, s := range r.stores {
		bases[i] = "/" + s.name + "/"
	}
	server.WriteError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s; the stores are under %s, the classroom page at /",
		req.Method, req.URL.Path, strings.Join(bases, ", ")))
}

// wantsHTML says whether a request asks for a page: browsers name
// text/html in Accept, curl and racelab's client do not.
func wantsHTML(req *http.Request) bool {
	return strings.Contains(req.Header.Get("Accept"), "text/html")
}

// contentSecurity lets the page load its own script and style and talk
// to its own server, and nothing else: no inline script, no frame, no
// request anywhere else, so that nothing a student sends can act as code.
const contentSecurity = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (r *Room) page(w http.ResponseWriter, _ *http.Request) {
	r.serveFile(w, "page/index.html", "text/html; charset=utf-8")
}

func (r *Room) asset(w http.ResponseWriter, req *http.Request) {
	name := strings.TrimPrefix(req.URL.Path, Prefix)
	typ := "text/css; charset=utf-8"
	if strings.HasSuffix(name, ".js") {
		typ = "text/javascript; charset=utf-8"
	}
	r.serveFile(w, "page/"+name, typ)
}

func (r *Room) serveFile(w http.ResponseWriter, name, typ string) {
	b, err := page.ReadFile(name)
	if err != nil { // the routes name only embedded files
		server.WriteError(w, http.StatusNotFound, "no such file")
		return
	}
	h := w.Header()
	h.Set("Content-Type", typ)
	h.Set("Content-Security-Policy", contentSecurity)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(b)
}

// config tells the page what it shows: the stores, the stories they
// play with the curl lines to try, the addresses, the burst limits.
func (r *Room) config(w http.ResponseWriter, _ *http.Request) {
	type storeJSON struct {
		Name      string `json:"name"`
		Target    string `json:"target"`
		Guarantee string `json:"guarantee"`
		Holds     bool   `json:"holds"`
		Base      string `json:"base"`
	}
	type storyJSON struct {
		Name     string `json:"name"`
		Title    string `json:"title"`
		Rule     string `json:"rule"`
		Requests int    `json:"requests"`
		Act      string `json:"act"`
		Read     string `json:"read"`
		Example  string `json:"example"`
		// Acts and Stored are the op's words for the key table (its
		// requests, what the store holds); Plan says the rows show the
		// plan too (stale-plan).
		Acts     string   `json:"acts"`
		Stored   string   `json:"stored"`
		Plan     bool     `json:"plan,omitempty"`
		PlayedBy []string `json:"played_by"`
		// Curl are the curl lines to try, below a store's base.
		Curl []call `json:"curl"`
		// NotBurst, when set, is why the story has no burst button, and
		// RunFlags the flags of the racelab run that plays it instead.
		NotBurst string `json:"not_burst,omitempty"`
		RunFlags string `json:"run_flags,omitempty"`
		// SQL says the story is a SQL race (Config.Race): no keys, no
		// curl lines, a lane per transaction, and Fix says how it is
		// fixed.
		SQL bool   `json:"sql,omitempty"`
		Fix string `json:"fix,omitempty"`
	}
	out := struct {
		Stores     []storeJSON `json:"stores"`
		Stories    []storyJSON `json:"stories"`
		Addrs      []string    `json:"addrs"`
		MaxBurst   int         `json:"max_burst"`
		BurstEvery float64     `json:"burst_every_s"`
		// MaxBackground is the background switch's highest rate, and
		// Loadable says whether any store here can take its load.
		MaxBackground string `json:"max_background"`
		Loadable      bool   `json:"loadable"`
	}{Addrs: r.addrs, MaxBurst: r.maxBurst, BurstEvery: 1 / float64(r.limiter.Limit()),
		MaxBackground: r.load.max.String(), Loadable: len(r.load.loads) > 0}
	if out.Addrs == nil {
		out.Addrs = []string{}
	}
	for _, s := range r.stores {
		base := ""
		if s.name != "" {
			base = "/" + s.name
		}
		sj := storeJSON{s.label, s.target.Name(), s.target.Entry.Guarantee, s.target.Entry.Holds, base}
		if words, ok := databaseWords(s.target.Store); ok {
			sj.Guarantee = words // what the race runs at there, not what the catalog says of databases
		}
		out.Stores = append(out.Stores, sj)
	}
	for _, p := range r.pages {
		sc, w := p.sc, p.op.Words
		st := storyJSON{Name: sc.Name, Title: sc.Title, Rule: sc.Rule, Requests: min(sc.DefaultRequests, r.maxBurst),
			Act: string(sc.Op), Read: firstWord(p.op.ReadRoute), Example: w.Example, PlayedBy: []string{},
			Acts: w.Requests, Stored: w.Stored, Plan: p.op.Op == story.OpOriginal,
			Curl: p.calls, NotBurst: p.notBurst, RunFlags: p.runFlags, SQL: p.sql}
		if p.sql {
			st.Requests, st.Fix, st.Curl = sc.DefaultRequests, sc.Fix, []call{}
		}
		for _, s := range r.stores {
			if sc.Plays(s.target.Store) {
				st.PlayedBy = append(st.PlayedBy, s.label)
			}
		}
		out.Stories = append(out.Stories, st)
	}
	server.WriteJSON(w, http.StatusOK, out)
}

// story is the page of the story named name, nil when the room shows no
// such story.
func (r *Room) story(name string) *storyPage {
	for i := range r.pages {
		if r.pages[i].sc.Name == name {
			return &r.pages[i]
		}
	}
	return nil
}

// mount serves h under prefix: the request h sees has prefix cut from its
// path, so the contract below it is the contract at the root, byte for
// byte, keys still percent-decoded exactly once by h itself. The
// RequestURI stays as the client sent it, for the page's log.
func mount(prefix string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u := *req.URL
		u.Path = cutPrefix(req.URL.Path, prefix)
		if req.URL.RawPath != "" {
			if rest, ok := strings.CutPrefix(req.URL.RawPath, prefix); ok {
				u.RawPath = cmpPath(rest)
			} else {
				u.RawPath = "" // the prefix itself was escaped: read the decoded path
			}
		}
		r2 := req.Clone(req.Context())
		r2.URL = &u
		h.ServeHTTP(w, r2)
	})
}

func cutPrefix(p, prefix string) string { return cmpPath(strings.TrimPrefix(p, prefix)) }

// cmpPath is "/" for an empty path: /naive is the store's root, as /naive/ is.
func cmpPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
