package classroom

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// open opens a catalog store on the real clock, closed at cleanup.
func open(t *testing.T, spec string) *targets.Target {
	t.Helper()
	tg, err := targets.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("close %s: %v", spec, err)
		}
	})
	return tg
}

// serve serves h on a loopback port behind guarded.Server's guards, as
// racelab serve does, until cleanup, and returns its base URL.
func serve(t *testing.T, h http.Handler) string { return httpapitest.Serve(t, h) }

// room serves a Room over stores given as NAME=SPEC (or a SPEC alone, at
// the root) and returns its base URL and the room. The room's context
// ends at cleanup, before the server stops.
func room(t *testing.T, cfg Config, stores ...string) (string, *Room) {
	t.Helper()
	for _, s := range stores {
		name, spec, ok := strings.Cut(s, "=")
		if !ok {
			name, spec = "", s
		}
		tg := open(t, spec)
		cfg.Stores = append(cfg.Stores, Store{Name: name, Target: tg, Contract: server.New(tg.Store, server.WithStoreName(tg.Name()))})
	}
	return start(t, cfg)
}

// start serves a Room of cfg until cleanup, and returns its base URL and
// the room. The room's context ends at cleanup, before the server stops.
func start(t *testing.T, cfg Config) (string, *Room) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := New(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	base := serve(t, r)
	t.Cleanup(cancel)
	return base, r
}

type answer struct {
	status      int
	body, ctype string
	allow       string
	arrival     bool
}

func do(t *testing.T, method, u string, header ...string) answer {
	t.Helper()
	a := httpapitest.Do(t, method, u, "", header...)
	return answer{a.Status, string(a.Body), a.Header.Get("Content-Type"), a.Header.Get("Allow"), a.Header.Get(httpapi.ArrivalHeader) != ""}
}

// TestContractUnchangedUnderPrefix: below a named store's prefix the
// contract answers exactly what it answers at the root of a server of
// its own: every route, every error, keys decoded exactly once (an
// encoded slash, an encoded comma, Arabic), the index and /stats.
func TestContractUnchangedUnderPrefix(t *testing.T) {
	alone := serve(t, server.New(open(t, "actor").Store, server.WithStoreName("actor")))
	named, _ := room(t, Config{}, "a=actor", "b=kv")
	requests := []struct{ method, path string }{
		{"POST", "/hit/hello"}, {"POST", "/hit/hello"}, {"GET", "/get/hello"},
		{"GET", "/get?slugs=hello,x%2Cy,nothing"}, {"GET", "/get/a%2Fb"}, {"POST", "/hit/%D9%85%D8%B1%D8%AD%D8%A8%D8%A7"},
		{"GET", "/get/%D9%85%D8%B1%D8%AD%D8%A8%D8%A7"}, {"GET", "/get/%25D9%2585"},
		{"POST", "/download/ada"}, {"POST", "/download/ada"}, {"POST", "/download/ada"}, {"POST", "/download/ada"},
		{"POST", "/download/ada"}, {"POST", "/download/ada"}, {"GET", "/quota/ada"},
		{"POST", "/checkout/painting"}, {"POST", "/checkout/painting"}, {"GET", "/item/painting"},
		{"GET", "/hit/hello"}, {"DELETE", "/get/hello"}, {"POST", "/nope"}, {"POST", "/hit/"}, {"GET", "/hit/a/b"},
		{"GET", "/"}, {"GET", "/stats"}, {"GET", "/stats?route=hit&key=never-sent"},
	}
	for _, rq := range requests {
		want := do(t, rq.method, alone+rq.path)
		got := do(t, rq.method, named+"/a"+rq.path)
		if got != want {
			t.Errorf("%s /a%s = %+v\nwant (at the root of its own server) %+v", rq.method, rq.path, got, want)
		}
	}
	if got, want := do(t, "GET", named+"/a"), do(t, "GET", named+"/a/"); got != want || got.status != 200 {
		t.Errorf("GET /a = %+v; want the index, as GET /a/ = %+v", got, want)
	}
}

// TestRoot: GET / is the page for a browser and JSON for anything else:
// the contract's own index when one store is served at the root, as it
// always was, else where the stores are.
func TestRoot(t *testing.T) {
	alone := serve(t, server.New(open(t, "kv").Store, server.WithStoreName("kv")))
	root, _ := room(t, Config{}, "kv")
	if got, want := do(t, "GET", root+"/"), do(t, "GET", alone+"/"); got != want {
		t.Errorf("GET / without asking for HTML = %+v; want the contract's index %+v", got, want)
	}
	if got, want := do(t, "POST", root+"/hit/x"), do(t, "POST", alone+"/hit/x"); got != want {
		t.Errorf("POST /hit/x at the root = %+v; want %+v", got, want)
	}
	named, _ := room(t, Config{}, "naive=kv", "fixed=actor")
	for _, base := range []string{root, named} {
		page := do(t, "GET", base+"/", "Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		if page.status != 200 || page.ctype != "text/html; charset=utf-8" || !strings.Contains(page.body, `<script src="/classroom/page.js"`) {
			t.Errorf("%s: GET / asking for HTML = %d %s %.80q; want the page", base, page.status, page.ctype, page.body)
		}
		for _, asset := range []struct{ path, ctype string }{{"/classroom/page.js", "text/javascript; charset=utf-8"}, {"/classroom/page.css", "text/css; charset=utf-8"}, {"/classroom/", "text/html; charset=utf-8"}} {
			if got := do(t, "GET", base+asset.path); got.status != 200 || got.ctype != asset.ctype || len(got.body) < 100 {
				t.Errorf("GET %s = %d %s (%d bytes); want 200 %s", asset.path, got.status, got.ctype, len(got.body), asset.ctype)
			}
		}
		if got := do(t, "GET", base+"/classroom/nope"); got.status != 404 || !json.Valid([]byte(got.body)) {
			t.Errorf("GET /classroom/nope = %+v; want 404 in JSON", got)
		}
		if got := do(t, "POST", base+"/classroom/config"); got.status != 405 || got.allow != "GET, HEAD" {
			t.Errorf("POST /classroom/config = %+v; want 405, Allow: GET, HEAD (it answers HEAD too)", got)
		}
	}
	var index struct {
		Stores map[string]struct{ Target, Base string }
	}
	got := do(t, "GET", named+"/")
	if err := json.Unmarshal([]byte(got.body), &index); err != nil || index.Stores["naive"].Base != "/naive/" || index.Stores["fixed"].Target != "actor" {
		t.Errorf("GET / with named stores = %+v (%v); want where each store is", got, err)
	}
	if got := do(t, "GET", named+"/hit/x"); got.status != 404 || !strings.Contains(got.body, "/naive/, /fixed/") {
		t.Errorf("GET /hit/x with named stores = %+v; want 404 naming the stores' prefixes", got)
	}
}

// TestPageHeaders: the page loads nothing from anywhere but its server,
// and a browser must not guess its type.
func TestPageHeaders(t *testing.T) {
	base, _ := room(t, Config{}, "kv")
	resp, err := http.Get(base + "/classroom/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q; want it to hold %q", csp, want)
		}
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q; want nosniff", got)
	}
	for _, f := range []string{"page/index.html", "page/page.js", "page/page.css"} {
		b, err := page.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, external := range []string{"http://", "https://", "//fonts.", "@import"} {
			if strings.Contains(string(b), external) && !(f == "page/page.js" && external == "http://") {
				t.Errorf("%s refers to %q: the page must need nothing from the network", f, external)
			}
		}
	}
}

// snapshot is the board as the event stream sends it.
type snapshot struct {
	Seq      int64
	Requests int64
	Log      []struct {
		Store, Method, URI, Answer string
		Status                     int
	}
	Keys       map[string][]snapRow
	Bursts     map[string]burstView
	Firing     string
	Background backgroundView
}

// snapRow is one key of a story, and snapCell one store's cell in it, as
// the event stream sends them.
type snapRow struct {
	Key   string
	Cells map[string]snapCell
}

type snapCell struct {
	Requests, Allowed, Refused, Reads, Failed int
	Answered, Stored                          *int64
	Plan                                      string
	PlanRead                                  string `json:"plan_read"`
}

// stream opens the event stream; next reads its next snapshot, failing
// the test if none comes within 20s (a board that stopped changing sends
// none).
func stream(t *testing.T, base string) (next func() snapshot) {
	t.Helper()
	next, _ = openPage(t, base)
	return next
}

// openPage is stream, with what closes the page before cleanup does, as
// a browser leaving it closes its stream.
func openPage(t *testing.T, base string) (next func() snapshot, leave func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/classroom/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		cancel()
		resp.Body.Close()
		t.Fatalf("events: Content-Type %q; want text/event-stream", ct)
	}
	type event struct {
		data string
		err  error
	}
	events := make(chan event)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lines := bufio.NewReader(resp.Body)
		for {
			line, err := lines.ReadString('\n')
			data, ok := strings.CutPrefix(line, "data: ")
			if err == nil && !ok {
				continue
			}
			select {
			case events <- event{data, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var once sync.Once
	leave = func() {
		once.Do(func() {
			cancel()
			resp.Body.Close()
			<-done
		})
	}
	t.Cleanup(leave)
	return func() snapshot {
		t.Helper()
		select {
		case e := <-events:
			if e.err != nil {
				t.Fatalf("events: %v", e.err)
			}
			var s snapshot
			if err := json.Unmarshal([]byte(e.data), &s); err != nil {
				t.Fatalf("events: %v: %s", err, e.data)
			}
			return s
		case <-time.After(20 * time.Second):
			t.Fatal("events: no snapshot in 20s")
			return snapshot{}
		}
	}, leave
}

// until reads snapshots until ok says one is what the test waits for,
// within 20s.
func until(t *testing.T, next func() snapshot, what string, ok func(snapshot) bool) snapshot {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := next()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot showed %s in 20s; last: %+v", what, s)
		}
	}
}

// TestBoardShowsRequestsAsTheyLand: seven downloads sent by HTTP to each
// of two stores reach an open event stream, with what each store was
// asked, answered and holds. The fixed store grants five and refuses two;
// what the page says the naive store holds is what it reads itself.
func TestBoardShowsRequestsAsTheyLand(t *testing.T) {
	base, _ := room(t, Config{}, "naive=kv", "fixed=sqlite")
	next := stream(t, base)
	if s := next(); len(s.Log) != 0 || len(s.Keys) != 0 {
		t.Fatalf("first snapshot of a new room: %+v; want it empty", s)
	}
	do(t, "GET", base+"/naive/") // an index, as racelab run's warm-up: not on the board
	for _, store := range []string{"naive", "fixed"} {
		for range 7 {
			if a := do(t, "POST", base+"/"+store+"/download/ada"); a.status != 200 && a.status != 429 {
				t.Fatalf("download: %+v", a)
			}
		}
	}
	var count struct{ Count int64 }
	if err := json.Unmarshal([]byte(do(t, "GET", base+"/naive/quota/ada").body), &count); err != nil {
		t.Fatal(err)
	}
	s := until(t, next, "both stores' rows settled", func(s snapshot) bool {
		rows := s.Keys["six-become-four"]
		if len(rows) != 1 {
			return false
		}
		n, f := rows[0].Cells["naive"], rows[0].Cells["fixed"]
		// The board reads the stores in the background: a read taken
		// before the last download landed is replaced by the next one.
		// The quota read is on the board once its event has landed too.
		return n.Stored != nil && *n.Stored == count.Count && n.Requests == 8 && f.Stored != nil && *f.Stored == 5 && f.Requests == 7
	})
	row := s.Keys["six-become-four"][0]
	if row.Key != "ada" {
		t.Errorf("row for %q; want ada", row.Key)
	}
	if f := row.Cells["fixed"]; f.Allowed != 5 || f.Refused != 2 || *f.Stored != 5 || f.Answered == nil || *f.Answered != 5 {
		t.Errorf("fixed: %+v; want 5 granted, 2 refused, answered 5, stored 5", f)
	}
	if n := row.Cells["naive"]; n.Requests != 8 || n.Allowed+n.Refused != 7 || n.Reads != 1 {
		t.Errorf("naive: %+v; want 7 downloads and 1 read", n)
	}
	if len(s.Log) != 15 || s.Requests != 15 {
		t.Fatalf("log of %d lines, %d requests; want the 15 downloads and reads, not the index", len(s.Log), s.Requests)
	}
	if l := s.Log[1]; l.Store != "fixed" || l.Method != "POST" || l.URI != "/fixed/download/ada" || l.Status != 429 || l.Answer != `{"allowed":false,"count":5}` {
		t.Errorf("latest download in the log: %+v; want fixed's seventh, refused", l)
	}
}

// TestBoardKeepsTheLatestKeys: a story shows its latest KeysShown keys,
// the latest first, and a key the contract refused makes no row.
func TestBoardKeepsTheLatestKeys(t *testing.T) {
	base, _ := room(t, Config{}, "actor")
	next := stream(t, base)
	next()
	for i := range KeysShown + 2 {
		do(t, "POST", base+"/hit/k"+strconv.Itoa(i))
	}
	do(t, "POST", base+"/hit/"+url.PathEscape("bad\x01key"))
	s := until(t, next, "the last hit", func(s snapshot) bool { return s.Requests == KeysShown+3 })
	rows := s.Keys["ten-hits-one-view"]
	if len(rows) != KeysShown || rows[0].Key != "k"+strconv.Itoa(KeysShown+1) || rows[KeysShown-1].Key != "k2" {
		keys := []string{}
		for _, r := range rows {
			keys = append(keys, r.Key)
		}
		t.Errorf("rows %v; want the latest %d keys, latest first", keys, KeysShown)
	}
	if s.Log[0].Status != 400 {
		t.Errorf("latest log line %+v; want the refused key, 400", s.Log[0])
	}
}

// TestBurst: the button's burst runs at every store with the engine of
// racelab run: the naive store loses updates, the fixed one counts all
// ten; both stores stay open and served afterwards; a second press within
// BurstEvery is refused 429 with Retry-After.
func TestBurst(t *testing.T) {
	base, _ := room(t, Config{BurstEvery: time.Hour}, "naive=kv", "fixed=sqlite")
	next := stream(t, base)
	next()
	naive, fixed := burstTwo(t, base, `{"story":"ten-hits-one-view","requests":10}`)
	if naive.Store != "naive" || naive.Target != "kv" || naive.Allowed != 10 || naive.Counted >= 10 || !naive.Broken || naive.Verdict != "✗ broken, as a naive store does" {
		t.Errorf("naive: %+v; want 10 allowed, fewer counted, broken as expected", naive)
	}
	if fixed.Store != "fixed" || fixed.Target != "sqlite" || fixed.Allowed != 10 || fixed.Counted != 10 || fixed.Broken || fixed.Verdict != "✓ held" {
		t.Errorf("fixed: %+v; want 10 allowed, 10 counted, held", fixed)
	}
	for _, s := range []burstStore{naive, fixed} {
		if n := strings.Count(s.Lanes, `class="answer allowed"><rect`); n != 10 {
			t.Errorf("%s's lanes draw %d answered bars; want 10", s.Store, n)
		}
		if err := xml.Unmarshal([]byte(s.Lanes), new(struct{})); err != nil {
			t.Errorf("%s's lanes are not well-formed SVG: %v", s.Store, err)
		}
	}
	if !strings.Contains(naive.Lanes, "erased #") {
		t.Errorf("naive's lanes say no update was erased, yet it lost %d", 10-naive.Counted)
	}
	s := until(t, next, "the burst", func(s snapshot) bool { return s.Bursts["ten-hits-one-view"].Requests == 10 })
	if s.Firing != "" || s.Bursts["ten-hits-one-view"].Stores[1].Counted != 10 {
		t.Errorf("snapshot after the burst: firing %q, %+v", s.Firing, s.Bursts)
	}
	// The engine borrowed the stores; it did not close them.
	for _, store := range []string{"naive", "fixed"} {
		if a := do(t, "POST", base+"/"+store+"/hit/after"); a.status != 200 {
			t.Errorf("POST /%s/hit/after the burst = %+v; want 200: the store must stay open", store, a)
		}
	}
	again := post(t, base+"/classroom/burst", `{"story":"ten-hits-one-view","requests":10}`)
	if again.status != 429 || !strings.Contains(again.body, "one burst every 1h0m0s") {
		t.Errorf("a second burst at once = %+v; want 429 saying one burst an hour", again)
	}
}

// TestBurstRefusals: what the button takes, and nothing else.
func TestBurstRefusals(t *testing.T) {
	base, r := room(t, Config{MaxBurst: 20}, "actor")
	for _, tt := range []struct {
		body string
		code int
		says string
	}{
		{`{"story":"no-such-story","requests":10}`, 400, "no store here plays it"},
		{`{"story":"ten-hits-one-view","requests":0}`, 400, "requests 0: want 1 to 20"},
		{`{"story":"ten-hits-one-view","requests":21}`, 400, "requests 21: want 1 to 20"},
		{`{"story":"ten-hits-one-view","requests":10,"seed":3}`, 400, "unknown field"},
		{`{"story":"stale-plan","requests":10}`, 400, "has no burst button: it plays over minutes"},
		{`not json`, 400, "want {"},
	} {
		if got := post(t, base+"/classroom/burst", tt.body); got.status != tt.code || !strings.Contains(got.body, tt.says) {
			t.Errorf("burst %s = %+v; want %d saying %q", tt.body, got, tt.code, tt.says)
		}
	}
	if got := do(t, "GET", base+"/classroom/burst"); got.status != 405 {
		t.Errorf("GET /classroom/burst = %+v; want 405", got)
	}
	r.firing.Lock() // a burst is running
	got := post(t, base+"/classroom/burst", `{"story":"ten-hits-one-view","requests":10}`)
	r.firing.Unlock()
	if got.status != 429 || !strings.Contains(got.body, msgBusy) {
		t.Errorf("burst while one runs = %+v; want 429 %q", got, msgBusy)
	}
	// A cross-origin page may not press the button (guarded.Server's guard).
	if got := post(t, base+"/classroom/burst", `{"story":"ten-hits-one-view","requests":10}`, "Origin", "https://evil.example"); got.status != 403 {
		t.Errorf("burst from another origin = %+v; want 403", got)
	}
}

func post(t *testing.T, u, body string, header ...string) answer {
	t.Helper()
	a := httpapitest.Do(t, "POST", u, body, append([]string{"Content-Type", "application/json"}, header...)...)
	return answer{status: a.Status, body: string(a.Body), ctype: a.Header.Get("Content-Type")}
}

// TestEventsEndWithTheRoom: an open page does not hold serve's shutdown:
// its stream ends when the room's context does.
func TestEventsEndWithTheRoom(t *testing.T) {
	tg := open(t, "actor")
	ctx, cancel := context.WithCancel(context.Background())
	r, err := New(ctx, Config{Stores: []Store{{Target: tg, Contract: server.New(tg.Store)}}})
	if err != nil {
		t.Fatal(err)
	}
	base := serve(t, r)
	resp, err := http.Get(base + "/classroom/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		ended <- err
	}()
	cancel()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("stream ended with %v; want a clean end", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream outlived the room by 5s")
	}
}

// TestReplay: the replay is explain's, in virtual time: the same bytes
// from any room, each replay's steps numbered in its lanes.
func TestReplay(t *testing.T) {
	a, _ := room(t, Config{}, "actor")
	b, _ := room(t, Config{}, "naive=kv", "fixed=sqlite")
	for _, story := range []string{"ten-hits-one-view", "six-become-four", "five-checkouts", "six-of-five", "stale-plan"} {
		ra, rb := do(t, "GET", a+"/classroom/replay?story="+story), do(t, "GET", b+"/classroom/replay?story="+story)
		if ra.status != 200 || ra != rb {
			t.Errorf("%s: replays differ between rooms, or failed: %d / %d", story, ra.status, rb.status)
			continue
		}
		var rp replayJSON
		if err := json.Unmarshal([]byte(ra.body), &rp); err != nil {
			t.Fatal(err)
		}
		fix := slices.IndexFunc(rp.Replays, func(p replayPart) bool { return p.Target == "actor" })
		if len(rp.Replays) < 2 || rp.Replays[0].Target != "kv" || fix < 1 {
			t.Errorf("%s: %d replays; want the race on kv first, the fix on actor after it", story, len(rp.Replays))
		}
		for _, p := range rp.Replays {
			last := `data-step="` + strconv.Itoa(len(p.Steps)) + `"`
			beyond := `data-step="` + strconv.Itoa(len(p.Steps)+1) + `"`
			if len(p.Steps) == 0 || !strings.Contains(p.Lanes, last) || strings.Contains(p.Lanes, beyond) {
				t.Errorf("%s, %s: %d steps, but the lanes number them otherwise", story, p.Heading, len(p.Steps))
			}
		}
	}
	if got := do(t, "GET", a+"/classroom/replay?story=nope"); got.status != 400 {
		t.Errorf("replay of an unknown story = %+v; want 400", got)
	}
}

// TestCheckName: a store's name becomes a path prefix.
func TestCheckName(t *testing.T) {
	for _, ok := range []string{"naive", "fixed", "kv", "sqlite-2", "A_b"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v; want nil", ok, err)
		}
	}
	for name, says := range map[string]string{
		"":                      "want letters, digits",
		"na ive":                "want letters, digits",
		"a/b":                   "want letters, digits",
		"kv?x":                  "want letters, digits",
		strings.Repeat("a", 41): "up to 40",
		"classroom":             "already uses (/classroom/)",
		"hit":                   "already uses (/hit/)",
		"Stats":                 "already uses (/stats/)",
		"limit":                 "already uses (/limit/)",
		"plan":                  "already uses (/plan/)",
	} {
		if err := CheckName(name); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("CheckName(%q) = %v; want an error saying %q", name, err, says)
		}
	}
}

// TestNewRefuses: a room's stores are one unnamed or several named, each
// name once.
func TestNewRefuses(t *testing.T) {
	a, b := open(t, "actor"), open(t, "kv")
	h := server.New(a.Store)
	for _, tt := range []struct {
		stores []Store
		says   string
	}{
		{nil, "no store"},
		{[]Store{{Target: a, Contract: h}, {Name: "b", Target: b, Contract: h}}, "has no name"},
		{[]Store{{Name: "x", Target: a, Contract: h}, {Name: "x", Target: b, Contract: h}}, "two stores are named x"},
		{[]Store{{Name: "hit", Target: a, Contract: h}}, "already uses"},
		{[]Store{{Name: "x", Target: a}}, "needs its target and its contract"},
	} {
		if _, err := New(context.Background(), Config{Stores: tt.stores}); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("New(%d stores) = %v; want an error saying %q", len(tt.stores), err, tt.says)
		}
	}
}

// TestAddrs: curl lines name an address a student can reach.
func TestAddrs(t *testing.T) {
	if got := Addrs(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787}); len(got) != 1 || got[0] != "127.0.0.1:8787" {
		t.Errorf("Addrs(127.0.0.1:8787) = %v; want itself", got)
	}
	for _, ip := range []net.IP{net.IPv4zero, net.IPv6unspecified} {
		got := Addrs(&net.TCPAddr{IP: ip, Port: 8787})
		if len(got) == 0 {
			t.Errorf("Addrs(%s) is empty", ip)
		}
		for _, a := range got {
			host, port, err := net.SplitHostPort(a)
			if err != nil || port != "8787" || net.ParseIP(host) == nil || net.ParseIP(host).IsUnspecified() {
				t.Errorf("Addrs(%s) holds %q; want an address of this machine with port 8787", ip, a)
			}
		}
	}
}

// burstTwo presses the burst button with body on a room of two stores and
// answers what each made of it, naive first.
func burstTwo(t *testing.T, base, body string) (naive, fixed burstStore) {
	t.Helper()
	got := post(t, base+"/classroom/burst", body)
	if got.status != 200 {
		t.Fatalf("burst: %+v", got)
	}
	var view burstView
	if err := json.Unmarshal([]byte(got.body), &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Stores) != 2 {
		t.Fatalf("burst at %d stores; want naive and fixed", len(view.Stores))
	}
	return view.Stores[0], view.Stores[1]
}

// TestEventStreamsDoNotStarveStores: the page's event streams, more of
// them than the server's connection cap, as idle pages (or a flood) would
// open: the first MaxEventStreams are served, the rest answered 503, and
// the stores still answer as many requests at once as the cap allows.
func TestEventStreamsDoNotStarveStores(t *testing.T) {
	const maxConns, maxStreams, pages = 4, 2, 10
	tg := open(t, "actor")
	ctx, cancel := context.WithCancel(context.Background())
	r, err := New(ctx, Config{Stores: []Store{{Target: tg, Contract: server.New(tg.Store)}}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	base := httpapitest.ServeWith(t, server.Server{Handler: r, MaxConns: maxConns, MaxEventStreams: maxStreams, ShutdownTimeout: time.Second})
	t.Cleanup(cancel)
	addr := strings.TrimPrefix(base, "http://")
	send := func(req string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	status := func(c net.Conn, br *bufio.Reader) int {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a starved request waits forever
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0
		}
		return resp.StatusCode
	}
	got := map[int]int{}
	for range pages {
		got[status(send("GET /classroom/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))]++
	}
	if got[200] != maxStreams || got[503] != pages-maxStreams {
		t.Fatalf("%d pages' event streams, a cap of %d: answers %v; want %d × 200 and %d × 503", pages, maxStreams, got, maxStreams, pages-maxStreams)
	}
	type sent struct {
		c  net.Conn
		br *bufio.Reader
	}
	var hits []sent
	for range maxConns {
		c, br := send("POST /hit/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
		hits = append(hits, sent{c, br})
	}
	for i, h := range hits {
		if s := status(h.c, h.br); s != 200 {
			t.Errorf("store request %d of %d, with %d streams open = %d; want 200", i+1, maxConns, maxStreams, s)
		}
	}
}

// TestBurstAtItsLimit: a burst of exactly MaxBurst is fired; one more is
// refused.
func TestBurstAtItsLimit(t *testing.T) {
	const maxBurst = 3
	base, _ := room(t, Config{MaxBurst: maxBurst, BurstEvery: time.Hour}, "actor")
	if got := post(t, base+"/classroom/burst", fmt.Sprintf(`{"story":"ten-hits-one-view","requests":%d}`, maxBurst+1)); got.status != 400 {
		t.Errorf("a burst of MaxBurst+1 = %+v; want 400", got)
	}
	got := post(t, base+"/classroom/burst", fmt.Sprintf(`{"story":"ten-hits-one-view","requests":%d}`, maxBurst))
	var view burstView
	if err := json.Unmarshal([]byte(got.body), &view); got.status != 200 || err != nil || view.Requests != maxBurst || len(view.Stores) != 1 || view.Stores[0].Allowed != maxBurst {
		t.Errorf("a burst of exactly MaxBurst = %+v; want 200 with %d requests fired", got, maxBurst)
	}
}
