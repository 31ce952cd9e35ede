package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/storetest"
	"github.com/racelab/racelab/targets/story"
)

// TestClientPlansStaleRead plays the story's steps with the client's
// methods against kv over real sockets, with the plan's cache shortened
// to 2 s: a download right after the cancel is still granted on the
// cached plan, and once the cache has expired the plan reads cancelled
// and a download is refused 403. One machine in one location takes every
// request (sticky routing), so the page's read and the downloads share a
// cache; the cancel arrives from another location, as a webhook does.
func TestClientPlansStaleRead(t *testing.T) {
	base, _ := serve(t, open(t, "kv?plan-cache=2s&machines=1").Store)
	c := client(t, base, httpapi.Config{})
	ctx := context.Background()
	const who = "stale-subscriber"
	if err := c.Subscribe(ctx, who); err != nil {
		t.Fatal(err)
	}
	if paid, err := c.Paid(ctx, who); err != nil || !paid {
		t.Fatalf("Paid after Subscribe = %t, %v; want true", paid, err)
	}
	if ok, n, err := c.Download(ctx, who, story.DailyLimit); err != nil || !ok || n != 1 {
		t.Fatalf("Download before the cancel = %t, %d, %v; want granted, count 1", ok, n, err)
	}
	if err := c.Cancel(ctx, who); err != nil {
		t.Fatal(err)
	}
	// Within the cache's 2 s of the read above: the server still reads paid.
	if ok, n, err := c.Download(ctx, who, story.DailyLimit); err != nil || !ok || n != 2 {
		t.Fatalf("Download right after the cancel = %t, %d, %v; want granted on the cached plan, count 2", ok, n, err)
	}
	// Poll the page's read (which grants nothing) until the cache expires.
	deadline := time.Now().Add(20 * time.Second)
	for {
		paid, err := c.Paid(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		if !paid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the plan still reads paid 20 s after the cancel, with a plan cache of 2 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ok, n, err := c.Download(ctx, who, story.DailyLimit); err != nil || ok {
		t.Fatalf("Download after the cache expired = %t, %d, %v; want refused", ok, n, err)
	}
	if status, _, got := call(t, "POST", base+"/original/"+who, nil); status != http.StatusForbidden || got["granted"] != false {
		t.Errorf("POST /original/%s after expiry = %d %v, want 403 not granted", who, status, got)
	}
	if n, err := c.Downloads(ctx, who); err != nil || n != 2 {
		t.Errorf("Downloads = %d, %v; want the 2 granted", n, err)
	}
}

// TestPlanCacheDefault: kv's plan cache is 45 s unless shortened, so a
// read a second after the cancel still says paid; plan-cache=0s keeps
// none; a negative one is refused by name.
func TestPlanCacheDefault(t *testing.T) {
	base, _ := serve(t, open(t, "kv?machines=1").Store)
	c := client(t, base, httpapi.Config{})
	ctx := context.Background()
	storetest.ReadThenCancel(t, c, "s")
	time.Sleep(time.Second)
	if paid, err := c.Paid(ctx, "s"); err != nil || !paid {
		t.Errorf("Paid a second after the cancel = %t, %v; want true (cached for 45 s)", paid, err)
	}
	// plan-cache=0s keeps none: the cancel is read at once.
	none, _ := serve(t, open(t, "kv?plan-cache=0s&machines=1").Store)
	c0 := client(t, none, httpapi.Config{})
	for i, step := range []func(context.Context, string) error{c0.Subscribe, nil, c0.Cancel, nil} {
		if step != nil {
			if err := step(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if paid, err := c0.Paid(ctx, "s"); err != nil || paid != (i == 1) {
			t.Errorf("plan-cache=0s, Paid at step %d = %t, %v; want %t", i+1, paid, err, i == 1)
		}
	}
	if tg, err := targets.Open(ctx, "kv?plan-cache=-1s"); err == nil {
		tg.Close()
		t.Error("kv?plan-cache=-1s opened; want an error naming plan-cache")
	} else if !strings.Contains(err.Error(), "plan-cache") || !strings.Contains(err.Error(), "negative") {
		t.Errorf("kv?plan-cache=-1s: %v; want an error naming plan-cache and saying it is negative", err)
	}
}

// TestPlanAnswers: an answer outside the plan calls' routes is an error,
// never a grant, a refusal or a plan; a mapped plan may say paid by status.
func TestPlanAnswers(t *testing.T) {
	serveOne := func(pattern string, h http.HandlerFunc) string {
		mux := http.NewServeMux()
		mux.HandleFunc("/{$}", func(http.ResponseWriter, *http.Request) {})
		mux.HandleFunc(pattern, h)
		return serveHandler(t, mux)
	}
	ctx := context.Background()
	paidTests := []struct {
		name   string
		answer http.HandlerFunc
		says   string
	}{
		{"no paid field", reply(200, `{"subscriber":"s"}`), `answered 200 with (none) at "paid", want true or false`},
		{"paid not a boolean", reply(200, `{"subscriber":"s","paid":"yes"}`), `with "yes" at "paid"`},
		{"another key echoed", reply(200, `{"subscriber":"t","paid":true}`), `for key "t", asked for "s"`},
		{"not JSON", reply(200, `paid`), "not a JSON object"},
		{"server error", reply(500, `{"error":"boom"}`), "answered 500 Internal Server Error, want 200"},
	}
	for _, tt := range paidTests {
		c := client(t, serveOne("GET /plan/{s}", tt.answer), httpapi.Config{})
		paid, err := c.Paid(ctx, "s")
		if err == nil || paid || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: Paid = %t, %v; want an error saying %q", tt.name, paid, err, tt.says)
		}
	}
	downloadTests := []struct {
		name   string
		answer http.HandlerFunc
		says   string
	}{
		{"server error", reply(500, `{"error":"boom"}`), "answered 500 Internal Server Error, want 200, 403 or 429"},
		{"status and flag disagree", reply(200, `{"granted":false,"count":1}`), `false at "granted", want true`},
		{"refusal without a count", reply(403, `{"granted":false}`), `answered 403 without a number at "count"`},
		{"a grant in a refusal", reply(429, `{"granted":true,"count":5}`), `true at "granted", want false`},
	}
	for _, tt := range downloadTests {
		c := client(t, serveOne("POST /original/{s}", tt.answer), httpapi.Config{})
		ok, _, err := c.Download(ctx, "s", story.DailyLimit)
		if err == nil || ok || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: Download = %t, %v; want an error saying %q", tt.name, ok, err, tt.says)
		}
	}

	// A service that answers the plan by status: 200 paid, 402 not.
	entitled := map[string]bool{"ann": true}
	base := serveOne("GET /entitled/{s}", func(w http.ResponseWriter, r *http.Request) {
		if !entitled[r.PathValue("s")] {
			w.WriteHeader(http.StatusPaymentRequired)
		}
		fmt.Fprint(w, "{}")
	})
	_, route, err := httpapi.ParseCall("plan=/entitled/{subscriber} no=402")
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, base, httpapi.Config{Mapping: httpapi.Mapping{httpapi.CallPlan: route}})
	for who, want := range map[string]bool{"ann": true, "bob": false} {
		if paid, err := c.Paid(ctx, who); err != nil || paid != want {
			t.Errorf("mapped plan of %s = %t, %v; want %t", who, paid, err, want)
		}
	}
}

// TestPlanMappingValidates: a plan route says how it answers paid, by a
// field or by a status, and ok= has no meaning there.
func TestPlanMappingValidates(t *testing.T) {
	for says, over := range map[string]httpapi.Mapping{
		"neither a field (field=paid) nor a status": {httpapi.CallPlan: {Path: "/p/{subscriber}"}},
		"ok=paid: the plan's answer is a field":     {httpapi.CallPlan: {OK: "paid"}},
		"has no {subscriber}":                       {httpapi.CallOriginal: {Path: "/o/{visitor}"}},
	} {
		if err := httpapi.Contract().Merge(over).Validate(); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("Validate of %+v = %v, want an error saying %q", over, err, says)
		}
	}
	ok := httpapi.Contract().Merge(httpapi.Mapping{httpapi.CallPlan: {Path: "/p/{subscriber}", Field: "active"}})
	if err := ok.Validate(); err != nil {
		t.Errorf("a mapped plan with field=active: %v", err)
	}
	if p := ok[httpapi.CallPlan]; p.Key != "" || p.Field != "active" {
		t.Errorf("mapped plan = %+v; want no echo check and field active", p)
	}
	for _, c := range []httpapi.Call{httpapi.CallSubscribe, httpapi.CallCancel, httpapi.CallPlan, httpapi.CallOriginal, httpapi.CallOriginals} {
		if err := httpapi.Contract().Merge(httpapi.Mapping{c: {}}).Validate(); err != nil {
			t.Errorf("the contract's %s: %v", c, err)
		}
		emptied := httpapi.Contract()
		emptied[c] = httpapi.Route{}
		if err := emptied.Validate(); err == nil {
			t.Errorf("a mapping with %s empty validated", c)
		}
	}
}

// TestStagedOriginals: a staged burst of Download goes to the original
// call, not six-become-four's /download/, and is refused 403 or
// 429 as the contract says, in every sync mode.
func TestStagedOriginals(t *testing.T) {
	base, _ := serve(t, open(t, "actor").Store)
	ctx := context.Background()
	for _, mode := range syncModes {
		c := client(t, base, httpapi.Config{Wire: burst.Config{Sync: mode}})
		who := "burst-" + string(mode)
		if err := c.Subscribe(ctx, who); err != nil {
			t.Fatal(err)
		}
		const n = 7
		if err := c.Prepare(ctx, n); err != nil {
			t.Fatal(err)
		}
		fs := stage(t, ctx, c, n, func(ctx context.Context) (story.Reply, error) {
			ok, count, err := c.Download(ctx, who, story.DailyLimit)
			return story.Reply{OK: ok, Value: count}, err
		})
		replies := make(chan story.Reply, n)
		errs := make(chan error, n)
		for _, f := range fs {
			go func() {
				r, err := f(ctx)
				replies <- r
				errs <- err
			}()
		}
		granted := 0
		for range n {
			if err := <-errs; err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			if (<-replies).OK {
				granted++
			}
		}
		if granted != story.DailyLimit {
			t.Errorf("%s: %d of %d granted, want the daily limit %d", mode, granted, n, story.DailyLimit)
		}
		if got, _ := stats(t, base, "original", who); got != n {
			t.Errorf("%s: the server counted %d original requests for %s, want %d", mode, got, who, n)
		}
		if got, _ := stats(t, base, "download", who); got != 0 {
			t.Errorf("%s: %d requests went to /download/, want none", mode, got)
		}
	}
}
