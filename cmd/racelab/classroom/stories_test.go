package classroom

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/targets/story"
)

// awayFromWindowEdge waits, at most a few seconds, until the current rate
// limit window has that long left, so that requests sent next fall in
// one window and meet one limit of five.
func awayFromWindowEdge(t *testing.T) {
	t.Helper()
	const margin = 5 * time.Second
	now := time.Now()
	end := time.Unix(0, (liveWindow.Number(now)+1)*int64(liveWindow.Length))
	if left := end.Sub(now); left < margin {
		time.Sleep(left + 100*time.Millisecond)
	}
}

// together sends n POSTs to u from n goroutines released at once, and
// answers their statuses.
func together(t *testing.T, n int, u string) []int {
	t.Helper()
	var (
		wg       sync.WaitGroup
		release  = make(chan struct{})
		statuses = make([]int, n)
		errs     = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-release
			resp, err := http.Post(u, "", nil)
			if err != nil {
				errs[i] = err
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	close(release)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return statuses
}

// count is the "count" a contract's read answers.
func count(t *testing.T, u string) int64 {
	t.Helper()
	a := do(t, "GET", u)
	var c struct{ Count *int64 }
	if err := json.Unmarshal([]byte(a.body), &c); err != nil || a.status != 200 || c.Count == nil {
		t.Fatalf("GET %s = %+v (%v); want 200 with a count", u, a, err)
	}
	return *c.Count
}

// TestBoardShowsSixOfFive: eight requests of one caller sent at once to
// each store land on six-of-five's board. The actor admits five and
// refuses three, and holds five in the window; what the page says the
// naive store holds is what its own GET /limit reads. A read of another
// window counts as a read but is not what the board shows as held.
func TestBoardShowsSixOfFive(t *testing.T) {
	base, _ := room(t, Config{}, "naive=kv", "fixed=actor")
	next := stream(t, base)
	next()
	awayFromWindowEdge(t)
	for _, store := range []string{"naive", "fixed"} {
		for _, st := range together(t, 8, base+"/"+store+"/limit/bot") {
			if st != 200 && st != 429 {
				t.Fatalf("POST /%s/limit/bot answered %d; want 200 or 429", store, st)
			}
		}
	}
	if a := do(t, "GET", base+"/fixed/limit/bot?window=0"); a.status != 200 || !strings.Contains(a.body, `"count":0`) {
		t.Fatalf("GET /fixed/limit/bot?window=0 = %+v; want 200, a count of 0", a)
	}
	naive := count(t, base+"/naive/limit/bot")
	row, s := settled(t, next, "six-of-five", func(n, f snapCell) bool {
		return n.Stored != nil && *n.Stored == naive && f.Stored != nil && *f.Stored == 5 && f.Requests == 9
	})
	if row.Key != "bot" {
		t.Errorf("row for %q; want bot", row.Key)
	}
	if f := row.Cells["fixed"]; f.Allowed != 5 || f.Refused != 3 || f.Reads != 1 || f.Failed != 0 || f.Answered == nil || *f.Answered > 5 {
		t.Errorf("fixed (actor): %+v; want 5 admitted, 3 refused, 1 read, answered at most 5", f)
	}
	if n := row.Cells["naive"]; n.Requests != 9 || n.Allowed+n.Refused != 8 || n.Reads != 1 || n.Failed != 0 {
		t.Errorf("naive (kv): %+v; want 8 requests answered and 1 read", n)
	}
	for _, op := range []story.Op{story.OpHit, story.OpDownload, story.OpCheckout, story.OpOriginal} {
		if _, ok := s.Keys[storyName(t, op)]; ok {
			t.Errorf("requests on /limit/ made rows in %s", storyName(t, op))
		}
	}
}

// TestBoardShowsStalePlan: a subscriber subscribes, downloads two
// originals, cancels, is read, asks for another and is counted, on each
// store. Every request lands on stale-plan's row for the subscriber: the
// originals as allowed or refused, the rest as reads, the plan as the
// store was told it and as it read it. The actor refuses the original
// after the cancel and reads the plan as not paid, which is an answer,
// not a failure.
func TestBoardShowsStalePlan(t *testing.T) {
	base, _ := room(t, Config{}, "naive=kv", "fixed=actor")
	next := stream(t, base)
	next()
	read := map[string]string{}
	after := map[string]int{}
	for _, store := range []string{"naive", "fixed"} {
		u := base + "/" + store
		for _, step := range []struct{ method, path string }{
			{"POST", "/subscribe/grace"}, {"POST", "/original/grace"}, {"POST", "/original/grace"}, {"POST", "/cancel/grace"},
		} {
			if a := do(t, step.method, u+step.path); a.status != 200 && a.status != 403 {
				t.Fatalf("%s /%s%s = %+v", step.method, store, step.path, a)
			}
		}
		var plan struct{ Paid *bool }
		if a := do(t, "GET", u+"/plan/grace"); a.status != 200 || json.Unmarshal([]byte(a.body), &plan) != nil || plan.Paid == nil {
			t.Fatalf("GET /%s/plan/grace = %+v; want 200 saying paid or not", store, a)
		}
		read[store] = map[bool]string{true: "paid", false: "not paid"}[*plan.Paid]
		after[store] = do(t, "POST", u+"/original/grace").status
	}
	if after["fixed"] != 403 || read["fixed"] != "not paid" {
		t.Fatalf("actor after the cancel: original %d, plan read %s; want 403 and not paid", after["fixed"], read["fixed"])
	}
	naive := count(t, base+"/naive/original/grace")
	row, s := settled(t, next, "stale-plan", func(n, f snapCell) bool {
		return n.Stored != nil && *n.Stored == naive && n.Requests == 7 && f.Stored != nil && *f.Stored == 2 && f.Requests == 6
	})
	if row.Key != "grace" {
		t.Errorf("row for %q; want grace", row.Key)
	}
	if f := row.Cells["fixed"]; f.Allowed != 2 || f.Refused != 1 || f.Reads != 3 || f.Failed != 0 || f.Answered == nil || *f.Answered != 2 ||
		f.Plan != "cancelled" || f.PlanRead != "not paid" {
		t.Errorf("fixed (actor): %+v; want 2 granted, 1 refused, 3 reads (subscribe, cancel, plan), answered 2, cancelled and read not paid", f)
	}
	if n := row.Cells["naive"]; n.Allowed+n.Refused != 3 || n.Reads != 4 || n.Failed != 0 || n.Plan != "cancelled" || n.PlanRead != read["naive"] {
		t.Errorf("naive (kv): %+v; want 3 originals answered, 4 reads, cancelled and read %s", n, read["naive"])
	}
	// A subscribe after the read makes the read old news.
	do(t, "POST", base+"/fixed/subscribe/grace")
	s = until(t, next, "the second subscribe", func(s snapshot) bool {
		return len(s.Keys["stale-plan"]) == 1 && s.Keys["stale-plan"][0].Cells["fixed"].Requests == 7
	})
	if f := s.Keys["stale-plan"][0].Cells["fixed"]; f.Plan != "subscribed" || f.PlanRead != "" {
		t.Errorf("fixed after subscribing again: plan %q, read %q; want subscribed and no read since", f.Plan, f.PlanRead)
	}
}

// settled reads snapshots until the story shows one row whose naive and
// fixed cells ok accepts (the board reads the stores in the background),
// and answers that row and its snapshot.
func settled(t *testing.T, next func() snapshot, story string, ok func(naive, fixed snapCell) bool) (snapRow, snapshot) {
	t.Helper()
	s := until(t, next, "both stores' "+story+" settled", func(s snapshot) bool {
		rows := s.Keys[story]
		return len(rows) == 1 && ok(rows[0].Cells["naive"], rows[0].Cells["fixed"])
	})
	return s.Keys[story][0], s
}

// storyName is the name of the story of op.
func storyName(t *testing.T, op story.Op) string {
	t.Helper()
	for _, sc := range scenarios.All() {
		if sc.Op == op {
			return sc.Name
		}
	}
	t.Fatalf("no story of %s", op)
	return ""
}

// TestBurstSixOfFive: the button fires six-of-five's burst, N requests of
// one caller at once, at each store: the naive KV limiter admits more than
// five, the actor exactly five and counts them. stale-plan has no button.
func TestBurstSixOfFive(t *testing.T) {
	base, _ := room(t, Config{BurstEvery: time.Hour}, "naive=kv", "fixed=actor")
	next := stream(t, base)
	next()
	awayFromWindowEdge(t)
	naive, fixed := burstTwo(t, base, `{"story":"six-of-five","requests":12}`)
	if naive.Store != "naive" || naive.Allowed <= story.WindowLimit || !naive.Broken || naive.Verdict != "✗ broken, as a naive store does" {
		t.Errorf("naive (kv): %+v; want more than %d admitted, broken as expected", naive, story.WindowLimit)
	}
	if fixed.Store != "fixed" || fixed.Allowed != story.WindowLimit || fixed.Refused != 12-story.WindowLimit || fixed.Counted != story.WindowLimit || fixed.Broken || fixed.Verdict != "✓ held" {
		t.Errorf("fixed (actor): %+v; want exactly %d admitted and counted, the rest refused, held", fixed, story.WindowLimit)
	}
	for _, s := range []burstStore{naive, fixed} {
		drawn := strings.Count(s.Lanes, `class="answer allowed"><rect`) + strings.Count(s.Lanes, `class="answer refused"><rect`)
		if drawn != 12 {
			t.Errorf("%s's lanes draw %d answered bars; want 12, admitted and refused", s.Store, drawn)
		}
		if err := xml.Unmarshal([]byte(s.Lanes), new(struct{})); err != nil {
			t.Errorf("%s's lanes are not well-formed SVG: %v", s.Store, err)
		}
	}
	s := until(t, next, "the burst", func(s snapshot) bool { return s.Bursts["six-of-five"].Requests == 12 })
	if s.Firing != "" || s.Bursts["six-of-five"].Stores[1].Counted != story.WindowLimit {
		t.Errorf("snapshot after the burst: firing %q, %+v", s.Firing, s.Bursts)
	}
	if got := post(t, base+"/classroom/burst", `{"story":"stale-plan","requests":12}`); got.status != 400 || !strings.Contains(got.body, "racelab run stale-plan -t http://") {
		t.Errorf("a stale-plan burst = %+v; want 400 saying to play it with racelab run", got)
	}
}

// TestStoryCurlLines: every curl line the page shows for a story is a
// route the contract answers, and lands on that story's board; only
// stale-plan goes without a burst button, with a racelab run to play it.
func TestStoryCurlLines(t *testing.T) {
	base, _ := room(t, Config{}, "naive=kv", "fixed=actor")
	var cfg struct {
		Stories []struct {
			Name, Act    string
			NotBurstJSON string `json:"not_burst"`
			RunFlagsJSON string `json:"run_flags"`
			Curl         []call
		}
	}
	if err := json.Unmarshal([]byte(do(t, "GET", base+"/classroom/config").body), &cfg); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range cfg.Stories {
		names = append(names, st.Name)
		if (st.NotBurstJSON != "") != (st.Name == "stale-plan") || (st.RunFlagsJSON != "") != (st.Name == "stale-plan") {
			t.Errorf("%s: not_burst %q, run_flags %q; want them for stale-plan only", st.Name, st.NotBurstJSON, st.RunFlagsJSON)
		}
		if len(st.Curl) < 2 || st.Curl[0].Method != "POST" || st.Curl[len(st.Curl)-1].Method != "GET" {
			t.Errorf("%s: curl lines %v; want a request first and a read last", st.Name, st.Curl)
			continue
		}
		if !slices.ContainsFunc(st.Curl, func(c call) bool { return strings.HasPrefix(c.Path, "/"+st.Act+"/") && c.Method == "POST" }) {
			t.Errorf("%s: curl lines %v; none is its request, POST /%s/", st.Name, st.Curl, st.Act)
		}
		for _, c := range st.Curl {
			a := do(t, c.Method, base+"/fixed"+c.Path)
			if a.status != 200 && a.status != 403 && a.status != 409 && a.status != 429 {
				t.Errorf("%s: %s /fixed%s = %+v; want an answer of the story", st.Name, c.Method, c.Path, a)
			}
		}
	}
	if want := []string{"ten-hits-one-view", "six-become-four", "five-checkouts", "six-of-five", "stale-plan"}; !slices.Equal(names, want) {
		t.Fatalf("the page lists %v; want %v", names, want)
	}
	if got := fmt.Sprint(cfg.Stories[4].Curl); got != "[{POST /subscribe/grace} {GET /plan/grace} {POST /original/grace} {POST /cancel/grace} {POST /original/grace} {GET /plan/grace} {GET /original/grace}]" {
		t.Errorf("stale-plan's curl lines %s; want subscribe, plan, original, cancel, original, plan, originals", got)
	}
	s := until(t, stream(t, base), "a row in every story", func(s snapshot) bool {
		for _, n := range names {
			if len(s.Keys[n]) != 1 {
				return false
			}
		}
		return true
	})
	for _, st := range cfg.Stories {
		if r := s.Keys[st.Name][0]; r.Cells["fixed"].Requests != len(st.Curl) || r.Cells["fixed"].Failed != 0 {
			t.Errorf("%s: the board's row %+v; want its %d curl lines, none failed", st.Name, r, len(st.Curl))
		}
	}
}

// TestNewNeedsEachStorysOp: a story whose op is no row of the table the
// room was handed cannot be shown (its routes and words would be
// guesses), and a store may not be named after a route of the table's
// own ops, as it may not be after the contract's.
func TestNewNeedsEachStorysOp(t *testing.T) {
	tg := open(t, "actor")
	six := scenariostest.Lookup(t, "six-become-four")
	own := *six
	own.Name, own.Op = "six-seats", "reserve"
	if _, err := New(t.Context(), Config{Stores: []Store{{Target: tg, Contract: http.NotFoundHandler()}},
		Stories: []*engine.Scenario{six, &own}}); err == nil || !strings.Contains(err.Error(), "story six-seats: its op reserve is no row of the ops table") {
		t.Errorf("a story of an unknown op: %v, want it refused", err)
	}
	seat, _ := story.OpDownload.Spec()
	seat.Op, seat.Route, seat.Read, seat.ReadRoute = "reserve", "/reserve/{visitor}", "seats", "/seats/{visitor}"
	table, err := story.Ops().With(seat)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(t.Context(), Config{Ops: table, Stores: []Store{{Name: "seats", Target: tg, Contract: http.NotFoundHandler()}},
		Stories: []*engine.Scenario{six}}); err == nil || !strings.Contains(err.Error(), `store name "seats" is a path of op reserve`) {
		t.Errorf("a store named after an op's route: %v, want it refused", err)
	}
}
