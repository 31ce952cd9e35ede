package classroom

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// loadGoroutines counts the goroutines of a background load: the
// switch's own and those of scenarios/background and scenarios/load it
// starts. Nothing else in this package's tests runs those.
func loadGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "(*loadSwitch)") || strings.Contains(g, "racelab/scenarios/background.") || strings.Contains(g, "racelab/scenarios/load.") {
			count++
		}
	}
	return count
}

// switchLoad posts the switch's body and answers its status and what it
// said: the switch, or the refusal's words.
func switchLoad(t *testing.T, base, body string) (int, backgroundView, string) {
	t.Helper()
	a := post(t, base+"/classroom/background", body)
	var v backgroundView
	if a.status == 200 {
		if err := json.Unmarshal([]byte(a.body), &v); err != nil {
			t.Fatalf("switch %s: %v: %s", body, err, a.body)
		}
		return a.status, v, a.body
	}
	var refusal struct{ Error string }
	if err := json.Unmarshal([]byte(a.body), &refusal); err != nil {
		t.Fatalf("switch %s: %v: %s", body, err, a.body)
	}
	return a.status, v, refusal.Error
}

// TestBackgroundSwitch: with the switch off a burst has no background;
// on, the stores are loaded between bursts and a burst comes back with
// its verdict and, for each store, what the load around its trial came
// to (answered, p99, errors), said as racelab run says it; off, the load
// has stopped, every goroutine of it, by the time the answer comes, and
// the next burst has none again. The rate is low for the race detector on
// a busy machine (background_test in scenarios/background says why).
func TestBackgroundSwitch(t *testing.T) {
	base, _ := room(t, Config{BurstEvery: time.Millisecond}, "naive=kv", "fixed=sqlite")
	next := stream(t, base)
	if s := next(); s.Background.On {
		t.Fatalf("a new room's switch: %+v; want it off", s.Background)
	}
	if n := loadGoroutines(); n != 0 {
		t.Fatalf("%d load goroutines before the switch; want none", n)
	}
	naive, fixed := burstTwo(t, base, `{"story":"ten-hits-one-view","requests":10}`)
	if naive.Background != nil || fixed.Background != nil || naive.BackgroundLine != "" {
		t.Errorf("a burst with the switch off has a background: %+v, %+v", naive.Background, fixed.Background)
	}

	status, view, body := switchLoad(t, base, `{"on":true,"rate":"40/s"}`)
	if status != 200 || !view.On || view.Rate != "40/s" || len(view.Stores) != 2 || view.Stores[1] != "fixed (ten-hits-one-view)" {
		t.Fatalf("switch on = %d %+v %s; want on at 40/s on both stores", status, view, body)
	}
	until(t, next, "the switch on", func(s snapshot) bool { return s.Background.On && s.Background.Rate == "40/s" })
	testwait.Eventually(t, "the load between bursts under way", func() bool { return loadGoroutines() > 0 })

	naive, fixed = burstTwo(t, base, `{"story":"ten-hits-one-view","requests":10}`)
	if fixed.Verdict != "✓ held" || fixed.Counted != 10 || naive.Verdict == "" || naive.Verdict == "could not run" {
		t.Errorf("verdicts under load: naive %q, fixed %q (%d counted); want each judged, fixed held", naive.Verdict, fixed.Verdict, fixed.Counted)
	}
	for _, s := range []burstStore{naive, fixed} {
		b := s.Background
		if b == nil {
			t.Errorf("%s: no background beside the verdict", s.Store)
			continue
		}
		if b.Target != s.Store || b.Rate != 40 || b.Answered == 0 || b.Throughput() <= 0 || b.P99 <= 0 || b.Error != "" {
			t.Errorf("%s's background: %+v; want its own load at 40/s with answers and a p99", s.Store, *b)
		}
		if want := "background on " + s.Store + ": 40/s asked over 100 keys, "; !strings.HasPrefix(s.BackgroundLine, want) || !strings.Contains(s.BackgroundLine, " errors of ") {
			t.Errorf("%s's background line %q; want racelab run's, starting %q", s.Store, s.BackgroundLine, want)
		}
	}
	until(t, next, "the load resumed after the burst", func(s snapshot) bool {
		return s.Bursts["ten-hits-one-view"].Stores[1].Background != nil && s.Background.On
	})

	status, view, body = switchLoad(t, base, `{"on":false}`)
	if status != 200 || view.On || view.Why != offAsked {
		t.Fatalf("switch off = %d %+v %s; want off, saying so", status, view, body)
	}
	if n := loadGoroutines(); n != 0 {
		t.Errorf("%d load goroutines after the switch went off; want none", n)
	}
	naive, fixed = burstTwo(t, base, `{"story":"ten-hits-one-view","requests":10}`)
	if naive.Background != nil || fixed.Background != nil {
		t.Errorf("a burst after the switch went off has a background: %+v, %+v", naive.Background, fixed.Background)
	}
	if n := loadGoroutines(); n != 0 {
		t.Errorf("%d load goroutines after a burst with the switch off; want none", n)
	}
}

// TestBackgroundStopsWhenThePageLeaves: the load runs while a page is
// open; when the last one closes, it stops and the switch goes off. With
// no page open the switch refuses: nothing would be left to stop it.
func TestBackgroundStopsWhenThePageLeaves(t *testing.T) {
	base, r := room(t, Config{}, "actor")
	if status, _, body := switchLoad(t, base, `{"on":true,"rate":"20/s"}`); status != 409 || !strings.Contains(body, msgNoPage) {
		t.Errorf("switch on with no page open = %d %s; want 409 %q", status, body, msgNoPage)
	}
	first, leaveFirst := openPage(t, base)
	first()
	second, leaveSecond := openPage(t, base)
	second()
	if status, view, body := switchLoad(t, base, `{"on":true,"rate":"20/s"}`); status != 200 || !view.On {
		t.Fatalf("switch on = %d %s; want on", status, body)
	}
	testwait.Eventually(t, "the load under way", func() bool { return loadGoroutines() > 0 })
	leaveFirst()
	// One page is still open: the load goes on.
	until(t, second, "the switch still on", func(s snapshot) bool { return s.Background.On })
	if n := loadGoroutines(); n == 0 {
		t.Errorf("the load stopped with a page still open")
	}
	leaveSecond()
	testwait.Eventually(t, "the switch off once the last page left", func() bool {
		r.load.mu.Lock()
		defer r.load.mu.Unlock()
		return r.load.plan.Rate == 0 && r.load.why == offLeft
	})
	testwait.Eventually(t, "the load's goroutines gone", func() bool { return loadGoroutines() == 0 })
	third := stream(t, base)
	if s := third(); s.Background.On || s.Background.Why != offLeft {
		t.Errorf("a page opened after: switch %+v; want off, saying the page was left", s.Background)
	}
}

// TestBackgroundRefusals: the rate is one the load takes, up to the
// room's cap (cap−1 and cap pass, cap+1 not); a store in virtual time
// has no rate, and the switch says so in racelab run's words and stays
// off.
func TestBackgroundRefusals(t *testing.T) {
	base, _ := room(t, Config{MaxBackground: 10}, "actor")
	next := stream(t, base)
	next()
	for _, tc := range []struct {
		body string
		code int
		says string
	}{
		{`{"on":true,"rate":"fast"}`, 400, `background load "fast": want arrivals per second above 0, such as 200/s`},
		{`{"on":true,"rate":"0/s"}`, 400, "background load 0/s: want a rate above 0, such as 200/s"},
		{`{"on":true,"rate":"11/s"}`, 400, "background load 11/s: want at most 10/s on this page"},
		{`{"on":true,"rate":"9/s","keys":3}`, 400, "unknown field"},
		{`{"on":true,"rate":"9/s"}`, 200, `"rate":"9/s"`},
		{`{"on":true,"rate":"10/s"}`, 200, `"rate":"10/s"`},
		{`{"on":false}`, 200, `"on":false`},
	} {
		if status, _, body := switchLoad(t, base, tc.body); status != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("switch %s = %d %s; want %d saying %q", tc.body, status, body, tc.code, tc.says)
		}
	}
	if n := loadGoroutines(); n != 0 {
		t.Errorf("%d load goroutines after the switch went off; want none", n)
	}
	if got := do(t, "GET", base+"/classroom/background"); got.status != 405 {
		t.Errorf("GET /classroom/background = %+v; want 405", got)
	}

	virtual, err := targets.Open(context.Background(), "kv", targets.WithVirtualTime(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { virtual.Close() })
	real := open(t, "sqlite")
	vbase, _ := room(t, Config{Stores: []Store{{Name: "naive", Target: virtual, Contract: server.New(virtual.Store)},
		{Name: "fixed", Target: real, Contract: server.New(real.Store)}}})
	vnext := stream(t, vbase)
	vnext()
	const why = "background load on naive: it runs in virtual time, which has no rate; run it on the real clock"
	if status, _, body := switchLoad(t, vbase, `{"on":true,"rate":"20/s"}`); status != 409 || !strings.Contains(body, why) {
		t.Errorf("switch on with a store in virtual time = %d %s; want 409 %q", status, body, why)
	}
	if s := until(t, vnext, "the refusal", func(s snapshot) bool { return s.Background.Why != "" }); s.Background.On || s.Background.Why != why {
		t.Errorf("the switch after the refusal: %+v; want off, saying %q", s.Background, why)
	}
	if n := loadGoroutines(); n != 0 {
		t.Errorf("%d load goroutines after a refused switch; want none", n)
	}
}

// TestBackgroundSwitchUnderConcurrentUse: teachers flipping the switch at
// other rates, bursts fired and pages opened and left, all at once. Every
// answer is one of the switch's own, a burst under load says what its
// load came to, and once the switch is off no goroutine of any load is
// left.
func TestBackgroundSwitchUnderConcurrentUse(t *testing.T) {
	const togglers, flips, maxBursts = 3, 5, 40
	base, _ := room(t, Config{BurstEvery: time.Millisecond}, "actor")
	stream(t, base)() // a page stays open throughout
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range togglers {
		wg.Go(func() {
			<-release
			for j := range flips { // on, off, …, on: the switch ends on
				body := fmt.Sprintf(`{"on":true,"rate":"%d/s"}`, 20+10*i+j)
				if j%2 == 1 {
					body = `{"on":false}`
				}
				if status, said, err := postJSON(base+"/classroom/background", body); err != nil || status != 200 {
					t.Errorf("switch %s = %d %s (%v); want 200", body, status, said, err)
				}
			}
		})
	}
	underLoad := 0
	wg.Go(func() {
		<-release
		// Bursts until one has landed under load (the switch ends on),
		// and a few more after it.
		for n := 0; n < maxBursts && underLoad < 3; n++ {
			status, body, err := postJSON(base+"/classroom/burst", `{"story":"ten-hits-one-view","requests":5}`)
			if err == nil && status == 429 {
				continue // one burst at a time
			}
			var view burstView
			if err == nil {
				err = json.Unmarshal(body, &view)
			}
			if status != 200 || err != nil || len(view.Stores) != 1 {
				t.Errorf("burst = %d %s (%v); want 200 at the one store", status, body, err)
				continue
			}
			if b := view.Stores[0].Background; b != nil {
				underLoad++
				if b.Rate < 20 || b.Sent == 0 || b.Error != "" {
					t.Errorf("a burst's background: %+v; want a load the switch was set to, that sent", *b)
				}
			}
		}
	})
	wg.Go(func() {
		<-release
		for range flips {
			if err := visit(base); err != nil {
				t.Errorf("a page opened and left: %v", err)
			}
		}
	})
	close(release)
	wg.Wait()
	if underLoad == 0 {
		t.Errorf("no burst of %d landed under load, with the switch left on", maxBursts)
	}
	if status, view, said := switchLoad(t, base, `{"on":false}`); status != 200 || view.On {
		t.Fatalf("switch off = %d %s; want off", status, said)
	}
	if n := loadGoroutines(); n != 0 {
		t.Errorf("%d load goroutines after the switch went off; want none", n)
	}
}

// postJSON posts body and answers the status and body, for goroutines
// of a test, which must not stop it (post fails the test itself).
func postJSON(u, body string) (int, []byte, error) {
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// visit opens the page's event stream, reads its first snapshot and
// leaves, as a student glancing at the page does.
func visit(base string) error {
	resp, err := http.Get(base + "/classroom/events")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, "data: ") {
			return nil
		}
	}
}
