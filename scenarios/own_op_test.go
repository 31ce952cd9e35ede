package scenarios_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/cmd/racelab/classroom"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/story"
)

// This file is a story with a request of its own: reserving one of the
// last seats of a show, an op none of racelab's stories has. Its row of
// the ops table (seatOp) is all that the HTTP client, racelab serve's
// handler, the classroom board and the history model learn of it, handed
// to each as a value (story.Ops().With); its limit, three, travels with
// every request (?seats=3), since the op's own default is a hall of 50.
// The actor plays it as a capped count (story.Capped), as any store with
// Take does. Nothing else in racelab names it.

// lastSeats is the story's limit: the seats left.
const lastSeats = 3

// seatOp is the story's request and its read-back.
var seatOp = story.OpSpec{
	Op: "reserve", Method: http.MethodPost, Route: "/reserve/{show}", Key: "show",
	Field: "count", OK: "reserved",
	Read: "seats", ReadRoute: "/seats/{show}", ReadField: "taken",
	Refused: []int{http.StatusConflict}, Limit: "seats", DefaultLimit: 50,
	Words: story.Words{Request: "reserve", Requests: "reservations", Unit: "seat", Yes: "reserved", No: "sold out",
		Stored: "seats taken", Example: "gala"},
}

var lastThreeSeats = engine.Define(engine.Scenario{
	Tale: engine.Tale{
		Name:      "last-three-seats",
		Title:     "the last three seats of a show",
		Story:     "A box office has three seats left for the gala, and everyone clicks at once.",
		Rule:      "at most 3 seats reserved a show, and every reservation counted",
		Fix:       "One object per show takes the reservations one at a time.",
		Needs:     "seat reservations",
		Lineup:    []string{"actor:await-fetch", "actor"},
		KeyPrefix: "show",
	},
	Request: engine.Request{
		DefaultRequests: 10,
		Op:              seatOp.Op,
		Limit:           lastSeats,
	},
	Verdict: engine.Verdict{
		Model: engine.BoundedModel(seatOp, lastSeats),
		Judge: capJudge(lastSeats, "seat"),
		Tell: func(t *results.Trial, target string) string {
			return fmt.Sprintf("%s: %d reserved, %d sold out, %d taken", target, t.Allowed, t.Refused, t.Counted)
		},
	},
}, func(s story.Capped, ctx context.Context, key string, _ int) engine.Answer {
	return engine.AnswerOf(s.Take(ctx, seatOp.Op, key, lastSeats))
}, func(s story.Capped, ctx context.Context, key string) (int64, error) {
	return s.Taken(ctx, seatOp.Op, key)
})

// capJudge is the rule of a count capped at limit: never more granted
// than the limit, every granted one counted.
func capJudge(limit int64, unit string) func(t *results.Trial, target string) {
	return func(t *results.Trial, target string) {
		granted := int64(t.Allowed)
		t.Over, t.Lost = max(0, granted-limit), max(0, granted-t.Counted)
		if t.Over > 0 || t.Lost > 0 {
			t.Broken, t.Why = true, fmt.Sprintf("%s: %s granted against a limit of %d, counter at %d", target, results.Plural(granted, unit), limit, t.Counted)
		}
	}
}

// seatTable is the stories' ops table with the seat's row.
func seatTable(t *testing.T) story.Table {
	t.Helper()
	table, err := story.Ops().With(seatOp)
	if err != nil {
		t.Fatal(err)
	}
	return table
}

// openStore opens spec on the real clock, closed at cleanup.
func openStore(t *testing.T, spec string) *targets.Target {
	t.Helper()
	tg, err := targets.Open(context.Background(), spec, targets.WithVirtualTime(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// serveOps is `racelab serve --store spec` with the seat's row: the
// handler over an opened store on a loopback port.
func serveOps(t *testing.T, spec string, table story.Table) string {
	t.Helper()
	tg := openStore(t, spec)
	return httpapitest.Serve(t, server.New(tg.Store, server.WithOps(table), server.WithStoreName(tg.Name())))
}

// TestOwnOpJudged plays the story at limit-1, limit, limit+1 and well past
// it, on the actor and its await-fetch strategy embedded (virtual time),
// and over HTTP against racelab serve's handler over each (real clock,
// synchronized bursts): the actor holds in every trial, granting exactly
// min(n, 3), counting them, and answering in the op's words; the naive
// strategy breaks in every trial, as expected. Over HTTP the limit is the
// story's only because it travels: the server's own is 50.
func TestOwnOpJudged(t *testing.T) {
	table := seatTable(t)
	fixed := serveOps(t, "actor", table)
	// A long outside fetch keeps the window between read and write wide
	// on a loaded machine, so that every real-clock burst meets it.
	naive := serveOps(t, "actor:await-fetch?fetch-latency=50ms", table)
	for _, n := range []int{lastSeats - 1, lastSeats, lastSeats + 1, 10} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			res, err := engine.Run(t.Context(), engine.Plan{
				Scenario: lastThreeSeats, Requests: n, Trials: 3, Seed: 1,
				Targets:  []string{"actor", "actor:await-fetch", "fixed=" + fixed, "naive=" + naive},
				ExpectOf: map[string]engine.Override{"naive": engine.OverrideBreaks},
				Options:  []targets.Option{targets.WithHTTP(httpapi.Config{Ops: table})},
			})
			if err != nil {
				t.Fatal(err)
			}
			if fs := res.Shortfalls(); len(fs) != 0 {
				t.Fatalf("shortfalls %+v; want none", fs)
			}
			want := min(n, lastSeats)
			for _, tr := range res.Targets {
				s := tr.Summary()
				if tr.Name == "fixed" || tr.Target == "actor" {
					if s.Broken != 0 || s.Allowed.Min != want || s.Allowed.Max != want || s.CountedMin != int64(want) || s.CountedMax != int64(want) || s.HistoryChecked != 3 {
						t.Errorf("%s %s: broken in %d, allowed %+v, counted %d-%d, %d histories checked; want 0, %d, %d, 3 (%s)",
							tr.Name, tr.Target, s.Broken, s.Allowed, s.CountedMin, s.CountedMax, s.HistoryChecked, want, want, s.FirstError)
					}
					checkWords(t, tr)
					continue
				}
				if s.Broken != 3 {
					t.Errorf("%s %s: broken in %d of 3 trials, want all (%s)", tr.Name, tr.Target, s.Broken, s.FirstError)
				}
			}
		})
	}
}

// checkWords checks that every answer of a holding target is said in the
// op's words, from reserved at count 1 up to sold out at the limit.
func checkWords(t *testing.T, tr results.TargetResult) {
	t.Helper()
	for _, trial := range tr.Trials {
		var got []string
		for _, r := range trial.Requests {
			got = append(got, r.Answer)
		}
		slices.Sort(got)
		var want []string
		for i := range len(trial.Requests) {
			if i < lastSeats {
				want = append(want, fmt.Sprintf("reserved, count %d", i+1))
			} else {
				want = append(want, fmt.Sprintf("sold out, count %d", lastSeats))
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s trial %d: answers %q, want %q", tr.Target, trial.Index+1, got, want)
		}
	}
}

// TestOwnLimitJudgedOverHTTP plays stories of built-in ops held to a
// limit of their own, three: six-of-five at --limit 3 (the limit op) and
// three-a-day (the download op, the quota of issue 21's example), through
// the engine against racelab serve over a store that holds its limit. At
// limit-1, limit and limit+1 requests a burst, every trial grants
// min(n, 3), counts them, and holds. Held to the contract's 5 instead, as
// serve held every request before limits travelled, the burst of 4 would
// be judged one over a limit of 3.
func TestOwnLimitJudgedOverHTTP(t *testing.T) {
	six, err := scenarios.With(scenariostest.Lookup(t, "six-of-five"), results.Settings{Knobs: map[string]string{"limit": strconv.Itoa(lastSeats)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"actor", "sqlite"} {
		base := serveOps(t, store, story.Ops())
		for _, sc := range []*engine.Scenario{six, threeADay} {
			for _, n := range []int{lastSeats - 1, lastSeats, lastSeats + 1} {
				res, err := engine.Run(t.Context(), engine.Plan{Scenario: sc, Targets: []string{base}, Requests: n, Trials: 2})
				if err != nil {
					t.Fatal(err)
				}
				tr := res.Targets[0]
				if s := tr.Summary(); tr.Error != "" || s.Broken > 0 || s.Trials != 2 {
					t.Fatalf("%s on %s n=%d: error %q, %d broken of %d trials, want 2 holding (%s)", sc.Name, store, n, tr.Error, s.Broken, s.Trials, s.FirstError)
				}
				for _, trial := range tr.Trials {
					if want := min(n, lastSeats); trial.Allowed != want || trial.Counted != int64(want) || trial.Over != 0 {
						t.Errorf("%s on %s n=%d: %d granted, %d counted, %d over; want %d, %d, 0",
							sc.Name, store, n, trial.Allowed, trial.Counted, trial.Over, want, want)
					}
				}
			}
		}
	}
}

// TestOwnOpWholeRequests: one after another, the requests go as whole
// requests through the client's Take, not staged, and still carry the
// story's limit: three reserved, the fourth sold out.
func TestOwnOpWholeRequests(t *testing.T) {
	table := seatTable(t)
	res, err := engine.Run(t.Context(), engine.Plan{
		Scenario: lastThreeSeats, Requests: lastSeats + 1, Trials: 2, Sequential: true, Gap: time.Millisecond,
		Targets: []string{serveOps(t, "actor", table)},
		Options: []targets.Option{targets.WithHTTP(httpapi.Config{Ops: table})},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Targets[0].Summary()
	if s.Broken != 0 || s.Allowed.Max != lastSeats || s.Refused.Min != 1 || s.CountedMax != lastSeats {
		t.Errorf("broken in %d, allowed %+v, refused %+v, counted %d; want 0, 3, 1, 3 (%s)", s.Broken, s.Allowed, s.Refused, s.CountedMax, s.FirstError)
	}
}

// TestOwnOpUnknownWithoutItsRow: a client not handed the row cannot make
// the request, and says which ops it knows, rather than guessing a route.
func TestOwnOpUnknownWithoutItsRow(t *testing.T) {
	res, err := engine.Run(t.Context(), engine.Plan{
		Scenario: lastThreeSeats, Requests: 2, Trials: 1,
		Targets: []string{serveOps(t, "actor", seatTable(t))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Targets[0].Error; !strings.Contains(got, `unknown operation "reserve"; want hit, download, checkout, limit or original`) {
		t.Errorf("error %q, want the unknown op named", got)
	}
}

// TestOwnOpOnTheBoard: the classroom board shows the story beside
// six-become-four and three-a-day, two stories of one op (download) that
// the board tells apart by the limit their requests carry, each with its
// own keys, curl lines and words; and its burst button fires the story
// at both stores, the naive one breaking and the actor holding at 3.
func TestOwnOpOnTheBoard(t *testing.T) {
	table := seatTable(t)
	six := scenariostest.Lookup(t, "six-become-four")
	var stores []classroom.Store
	for _, s := range []struct{ name, spec string }{{"naive", "actor:await-fetch?fetch-latency=50ms"}, {"fixed", "actor"}} {
		tg := openStore(t, s.spec)
		stores = append(stores, classroom.Store{Name: s.name, Target: tg,
			Contract: server.New(tg.Store, server.WithOps(table), server.WithStoreName(tg.Name()))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	room, err := classroom.New(ctx, classroom.Config{Stores: stores, Ops: table,
		Stories: []*engine.Scenario{six, threeADay, lastThreeSeats}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	base := httpapitest.Serve(t, room)
	t.Cleanup(cancel) // the room's streams end before the server stops

	var config struct {
		Stories []struct {
			Name, Acts, Stored string
			Curl               []struct{ Method, Path string }
		}
	}
	if a := httpapitest.Do(t, "GET", base+"/classroom/config", ""); a.Status != http.StatusOK || json.Unmarshal(a.Body, &config) != nil {
		t.Fatalf("config: %d %s", a.Status, a.Body)
	}
	wantConfig := []string{
		"six-become-four downloads count POST /download/ada GET /quota/ada",
		"three-a-day downloads count POST /download/ada-3?limit=3 GET /quota/ada-3?limit=3",
		"last-three-seats reservations seats taken POST /reserve/gala-3?seats=3 GET /seats/gala-3?seats=3",
	}
	var gotConfig []string
	for _, st := range config.Stories {
		line := strings.Join([]string{st.Name, st.Acts, st.Stored}, " ")
		for _, c := range st.Curl {
			line += " " + c.Method + " " + c.Path
		}
		gotConfig = append(gotConfig, line)
	}
	if !slices.Equal(gotConfig, wantConfig) {
		t.Errorf("stories on the page:\n%s\nwant\n%s", strings.Join(gotConfig, "\n"), strings.Join(wantConfig, "\n"))
	}

	// Each story's requests, on keys of their own, at the fixed store.
	for _, r := range []struct {
		path   string
		times  int
		status int // of the last
	}{
		{"/fixed/download/bob", 1, 200},
		{"/fixed/download/cyd?limit=3", 4, 429},
		{"/fixed/reserve/gala?seats=3", 4, 409},
		// A limit no story here keeps: the request is logged, on no row.
		{"/fixed/download/dan?limit=4", 1, 200},
	} {
		for i := range r.times {
			if a := httpapitest.Do(t, "POST", base+r.path, ""); i == r.times-1 && a.Status != r.status {
				t.Errorf("POST %s #%d: %d %s, want %d", r.path, i+1, a.Status, a.Body, r.status)
			}
		}
	}
	// A read that says no limit counts for the story that shows its key,
	// not for the op's default story.
	if a := httpapitest.Do(t, "GET", base+"/fixed/quota/cyd", ""); a.Status != 200 {
		t.Errorf("GET quota: %d %s", a.Status, a.Body)
	}
	if a := httpapitest.Do(t, "GET", base+"/fixed/seats/gala?seats=3", ""); a.Status != 200 || !strings.Contains(string(a.Body), `"taken":3`) {
		t.Errorf("GET seats: %d %s, want the 3 taken", a.Status, a.Body)
	}
	want := map[string]string{
		"six-become-four":  "bob: 1 requests, 1 allowed, 0 refused, 0 reads, answered 1, stored 1",
		"three-a-day":      "cyd: 5 requests, 3 allowed, 1 refused, 1 reads, answered 3, stored 3",
		"last-three-seats": "gala: 5 requests, 3 allowed, 1 refused, 1 reads, answered 3, stored 3",
	}
	got := board(t, base, func(keys map[string][]boardRow) map[string]string {
		out := map[string]string{}
		for name, rows := range keys {
			var lines []string
			for _, r := range rows {
				c := r.Cells["fixed"]
				lines = append(lines, fmt.Sprintf("%s: %d requests, %d allowed, %d refused, %d reads, answered %s, stored %s",
					r.Key, c.Requests, c.Allowed, c.Refused, c.Reads, number(c.Answered), number(c.Stored)))
			}
			out[name] = strings.Join(lines, "; ")
		}
		return out
	}, want)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s on the board: %q, want %q", name, got[name], w)
		}
	}

	fired := httpapitest.Do(t, "POST", base+"/classroom/burst", `{"story":"last-three-seats","requests":10}`)
	var burst struct {
		Stores []struct {
			Store, Verdict string
			Allowed        int
			Counted        int64
			Broken         bool
		}
	}
	if fired.Status != http.StatusOK || json.Unmarshal(fired.Body, &burst) != nil || len(burst.Stores) != 2 {
		t.Fatalf("burst: %d %s", fired.Status, fired.Body)
	}
	for _, s := range burst.Stores {
		switch {
		case s.Store == "naive" && !s.Broken:
			t.Errorf("naive: %+v, want broken", s)
		case s.Store == "fixed" && (s.Broken || s.Allowed != lastSeats || s.Counted != lastSeats || s.Verdict != "✓ held"):
			t.Errorf("fixed: %+v, want 3 allowed, 3 counted, held", s)
		}
	}
}

// boardRow is one key of a story on the board, as its snapshot says it.
type boardRow struct {
	Key   string
	Cells map[string]struct {
		Requests, Allowed, Refused, Reads int
		Answered, Stored                  *int64
	}
}

func number(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// board reads the board's snapshots from its event stream until show
// says what want says (the stored counts are read back a moment after
// the requests land), or ten seconds pass, and answers the last.
func board(t *testing.T, base string, show func(map[string][]boardRow) map[string]string, want map[string]string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/classroom/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]string
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		var snap struct{ Keys map[string][]boardRow }
		if err := json.Unmarshal([]byte(data), &snap); err != nil {
			t.Fatal(err)
		}
		if got = show(snap.Keys); fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
	}
	return got
}
