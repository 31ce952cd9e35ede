package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The classroom page in a real browser: headless Chromium (the Debian
// package `chromium`, which .ci/run installs) driven by chromedp, against
// `racelab serve --store naive=kv --store fixed=sqlite` run in process as
// a teacher would run it. Each wait is bounded, the whole test well under
// a minute; without Chromium it skips, saying why.

// browserWait bounds every wait for the page to show something, and
// browserStart Chromium's start (seconds on a busy 2-core machine).
const (
	browserWait  = 30 * time.Second
	browserStart = 90 * time.Second
)

// browser starts a fresh headless Chromium for the test and its subtests,
// which each open a tab of it (tab): one browser start, not one a check.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install -y --no-install-recommends chromium; .ci/run does): the classroom page is not checked in a browser")
	}
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1600, 1400))...)
	first, closeFirst := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		closeFirst()
		stopAlloc()
	})
	// The first action starts the browser, and its context must not carry
	// a deadline (it would end the browser with it): a timer bounds it.
	slow := time.AfterFunc(browserStart, stopAlloc)
	err = chromedp.Do(first)
	if !slow.Stop() {
		t.Fatalf("chromium did not start within %s", browserStart)
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return first
}

// console is what a tab's page wrote to its console that fails the test.
type console struct {
	mu  sync.Mutex
	bad []string
	// stopped is the live stream's URL once the test has stopped the
	// page's server on purpose.
	stopped string
	// expected are errors the test provokes on purpose and asserts on the
	// page itself (a refused write), as the text they hold.
	expected []string
}

// expect lets through console errors holding s: the browser logs a
// refusal the test provoked, and the test checks the page says it.
func (c *console) expect(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expected = append(c.expected, s)
}

// serverStopped says the test is about to stop the server at addr with
// the page still open. The page's live stream is an EventSource, which
// the browser reconnects a few seconds after it ends; against a stopped
// server that attempt is refused, and Chromium logs the refusal as a
// console error. It is the browser's way, not the page's error, so it is
// let through, and nothing else is.
func (c *console) serverStopped(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = "http://" + addr + "/classroom/events"
}

func (c *console) add(m string, url string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped != "" && url == c.stopped && strings.Contains(m, "ERR_CONNECTION_REFUSED") {
		return
	}
	for _, e := range c.expected {
		if strings.Contains(m+" ("+url+")", e) {
			return
		}
	}
	c.bad = append(c.bad, m+" ("+url+")")
}

// tab opens a tab of the browser, closed at the test's cleanup, and
// collects what the page writes to its console; the test fails on any
// error or exception there (a script error, a file not found, a refused
// Content Security Policy).
func tab(t *testing.T, browser context.Context) (context.Context, *console) {
	t.Helper()
	tab, closeTab := chromedp.NewContext(browser)
	var (
		c    console
		done = make(chan struct{})
	)
	messages := chromedp.Console(tab)
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				c.add(m.String(), m.URL)
			}
		}
	}()
	t.Cleanup(func() {
		closeTab()
		<-done
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, m := range c.bad {
			t.Errorf("browser console: %s", m)
		}
	})
	return tab, &c
}

// within runs actions on tab, bounded by browserWait.
func within(t *testing.T, tab context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// text is the text the page shows at the CSS selector sel.
func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWait)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// number is the whole number the page shows at sel.
func number(t *testing.T, tab context.Context, sel string) int {
	t.Helper()
	s := text(t, tab, sel)
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s shows %q, not a number", sel, s)
	}
	return n
}

// waitFor waits until the JavaScript expression is true on the page.
func waitFor(t *testing.T, tab context.Context, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browserWait+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(browserWait), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("the page did not show %s within %s: %v", what, browserWait, err)
	}
}

// storeCell is the selector of a field in a store's column of a story.
func storeCell(story, store, field string) string {
	return fmt.Sprintf(`section[data-story=%q] article[data-store=%q] [data-field=%q]`, story, store, field)
}

// TestClassroomInBrowser runs the page's checks in one browser.
func TestClassroomInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("burst", func(t *testing.T) { classroomBurst(t, b) })
	t.Run("curl", func(t *testing.T) { classroomCurl(t, b) })
	t.Run("replay", func(t *testing.T) { classroomReplay(t, b) })
	t.Run("stories", func(t *testing.T) { classroomStories(t, b) })
	t.Run("token", func(t *testing.T) { classroomToken(t, b) })
	t.Run("race", func(t *testing.T) { classroomRace(t, b) })
}

// classroomToken: with a token (as under --public), the page opened
// without it cannot fire a burst, and the page opened at /#token=TOKEN,
// the address serve prints, can: the page passes the token it was given.
func classroomToken(t *testing.T, browser context.Context) {
	const token = "classroom-token-0123456789"
	addr, _ := startServe(t, "--store", "kv", "--quiet", "--token", token)
	const story = "ten-hits-one-view"
	fire := fmt.Sprintf(`section[data-story=%q] button.fire`, story)
	status := fmt.Sprintf(`section[data-story=%q] .fire-status`, story)
	for _, tt := range []struct{ fragment, want string }{
		{"", "takes writes only with its token"},
		{"#token=" + token, "fired at"},
	} {
		tab, console := tab(t, browser)
		if tt.fragment == "" {
			console.expect("status of 401 (Unauthorized) (http://" + addr + "/classroom/burst)")
		}
		within(t, tab, chromedp.Navigate("http://"+addr+"/"+tt.fragment), chromedp.WaitVisible(chromedp.CSS(fire)),
			chromedp.Click(chromedp.CSS(fire)))
		waitFor(t, tab, "the burst's outcome", fmt.Sprintf(`(document.querySelector(%q)?.textContent || "").includes(%q)`, status, tt.want))
	}
}

// classroomBurst: the teacher opens the page and clicks "Fire
// 10 at once" on ten-hits-one-view; the page shows the naive store
// counting fewer than the 10 hits it allowed and the fixed store counting
// all 10, each with a verdict in words and one lane per request.
func classroomBurst(t *testing.T, browser context.Context) {
	addr, stop := startServe(t, "--store", "naive=kv", "--store", "fixed=sqlite", "--quiet")
	tab, console := tab(t, browser)
	const story = "ten-hits-one-view"
	fire := fmt.Sprintf(`section[data-story=%q] button.fire`, story)
	within(t, tab, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS(fire)))
	if got := text(t, tab, fire); got != "Fire 10 at once" {
		t.Errorf("the button says %q; want %q", got, "Fire 10 at once")
	}
	within(t, tab, chromedp.Click(chromedp.CSS(fire)))
	for _, store := range []string{"naive", "fixed"} {
		waitFor(t, tab, store+"'s burst", fmt.Sprintf(`document.querySelector(%q).textContent !== "–"`, storeCell(story, store, "counted")))
	}
	naive, fixed := number(t, tab, storeCell(story, "naive", "counted")), number(t, tab, storeCell(story, "fixed", "counted"))
	if naive >= 10 {
		t.Errorf("naive (kv) counted %d of 10 simultaneous hits; want fewer: its read-then-write loses updates", naive)
	}
	if fixed != 10 {
		t.Errorf("fixed (sqlite) counted %d of 10 simultaneous hits; want 10", fixed)
	}
	for store, want := range map[string]string{"naive": "✗ broken, as a naive store does", "fixed": "✓ held"} {
		if got := number(t, tab, storeCell(story, store, "allowed")); got != 10 {
			t.Errorf("%s allowed %d hits; want 10: every hit is answered", store, got)
		}
		if got := text(t, tab, storeCell(story, store, "verdict")); got != want {
			t.Errorf("%s's verdict reads %q; want %q", store, got, want)
		}
		bars, err := chromedp.Run(tab, chromedp.Evaluate[int](fmt.Sprintf(
			`document.querySelectorAll('section[data-story=%q] figure[data-store=%q] svg g.answer rect').length`, story, store)))
		if err != nil || bars != 10 {
			t.Errorf("%s's lanes: %d request bars (%v); want 10", store, bars, err)
		}
	}
	if got := text(t, tab, storeCell(story, "naive", "account")); !strings.Contains(got, "updates lost") && !strings.Contains(got, "update lost") {
		t.Errorf("naive's account reads %q; want it to say how many updates were lost", got)
	}
	// The burst is the room's too: its key in each store's table, read
	// back, and one line each in the request log.
	for _, store := range []string{"naive", "fixed"} {
		waitFor(t, tab, store+"'s burst key in its table", fmt.Sprintf(
			`document.querySelectorAll('section[data-story=%q] article[data-store=%q] tbody tr:not(.empty)').length === 1`, story, store))
	}
	fired, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#log li code:first-of-type')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"naive", "fixed"} {
		if n := len(slices.DeleteFunc(slices.Clone(fired), func(l string) bool { return !strings.HasPrefix(l, "Fire 10 at once → "+store+", key ") })); n != 1 {
			t.Errorf("the request log shows %s's burst %d times; want once (log: %q)", store, n, fired)
		}
	}
	// On a 1,280-pixel projector the page fits its width: nothing scrolls
	// sideways, whatever the burst drew.
	within(t, tab, chromedp.EmulateViewport(1280, 900))
	waitFor(t, tab, "the page laid out at 1280", `window.innerWidth === 1280`)
	if over, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => {
		const w = document.documentElement.scrollWidth;
		if (w <= window.innerWidth) return "";
		return w + " px: " + [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth)
			.slice(0, 5).map(e => e.tagName + "." + e.className + " right " + Math.round(e.getBoundingClientRect().right)).join(", ");
	})()`)); err != nil || over != "" {
		t.Errorf("at 1280 pixels the page is wider than the window: %s (%v)", over, err)
	}
	if shot := os.Getenv("RACELAB_CLASSROOM_SHOT"); shot != "" {
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(90))
		if err == nil {
			err = os.WriteFile(shot, png, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	// serve stops cleanly with the page open and its live stream
	// connected, and the page says it lost the stream.
	console.serverStopped(addr)
	if code, stderr := stop(); code != exitOK {
		t.Errorf("serve with the page open: exit %d: %s", code, stderr)
	}
	waitFor(t, tab, "that it lost the live stream", `document.getElementById("conn").textContent.includes("reconnecting")`)
}

// classroomCurl: seven downloads sent by HTTP, as a student's
// curl sends them, show on the open page without a reload: each store's
// row for the visitor counts them, the fixed store grants five and
// refuses two, each shows what it holds (as its own quota route reads
// it), and the request log prints the curl line of each.
func classroomCurl(t *testing.T, browser context.Context) {
	addr, _ := startServe(t, "--store", "naive=kv", "--store", "fixed=sqlite", "--quiet")
	tab, _ := tab(t, browser) // closed before serve stops
	within(t, tab, chromedp.Navigate("http://"+addr+"/"))
	waitFor(t, tab, "the live stream", `document.getElementById("conn").textContent.includes("live")`)
	const story, visitor = "six-become-four", "ada"
	for _, store := range []string{"naive", "fixed"} {
		for range 7 {
			resp, err := http.Post("http://"+addr+"/"+store+"/download/"+visitor, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	row := func(store, field string) string {
		return fmt.Sprintf(`section[data-story=%q] article[data-store=%q] tr[data-key=%q] [data-field=%q]`, story, store, visitor, field)
	}
	// A row is redrawn at every snapshot, so it is read in one go.
	cells := func(store string) map[string]int {
		got, err := chromedp.Run(tab, chromedp.Evaluate[map[string]string](fmt.Sprintf(
			`Object.fromEntries([...document.querySelectorAll('section[data-story=%q] article[data-store=%q] tr[data-key=%q] td')].map(td => [td.dataset.field, td.textContent]))`,
			story, store, visitor)))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, f := range []string{"requests", "allowed", "refused"} {
			n, err := strconv.Atoi(got[f])
			if err != nil {
				t.Fatalf("%s's row for %s: %s is %q, not a number (%v)", store, visitor, f, got[f], got)
			}
			out[f] = n
		}
		return out
	}
	for _, store := range []string{"naive", "fixed"} {
		waitFor(t, tab, store+"'s 7 downloads", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === "7"`, row(store, "requests")))
		if c := cells(store); c["allowed"]+c["refused"] != 7 {
			t.Errorf("%s: %d allowed + %d refused; want the 7 downloads", store, c["allowed"], c["refused"])
		}
		// What the page says the store holds is what the store's own
		// quota route reads, once the store has settled.
		resp, err := http.Get("http://" + addr + "/" + store + "/quota/" + visitor)
		if err != nil {
			t.Fatal(err)
		}
		var q struct{ Count int }
		err = json.NewDecoder(resp.Body).Decode(&q)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, tab, fmt.Sprintf("%s holding %d", store, q.Count), fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === %q`, row(store, "stored"), strconv.Itoa(q.Count)))
	}
	if c := cells("fixed"); c["allowed"] != 5 || c["refused"] != 2 {
		t.Errorf("fixed (sqlite): %d granted, %d refused; want 5 and 2, a limit of 5 a day", c["allowed"], c["refused"])
	}
	log, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#log li code:first-of-type')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"naive", "fixed"} {
		line := "curl -X POST http://" + addr + "/" + store + "/download/" + visitor
		if n := countOf(log, line); n != 7 {
			t.Errorf("the log shows %q %d times; want 7 (log: %q)", line, n, log)
		}
	}
}

// classroomReplay: the replay view advances one step per key
// press, showing only the steps so far and saying the current one.
func classroomReplay(t *testing.T, browser context.Context) {
	addr, _ := startServe(t, "--store", "kv", "--quiet")
	tab, _ := tab(t, browser) // closed before serve stops
	within(t, tab, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS("#tab-replay")), chromedp.Click(chromedp.CSS("#tab-replay")))
	waitFor(t, tab, "the replay's first lanes", `document.querySelectorAll('#replay-lanes [data-step]').length > 0`)
	hidden := `document.querySelectorAll('#replay-lanes [data-step]:not(.later)').length`
	if n, err := chromedp.Run(tab, chromedp.Evaluate[int](hidden)); err != nil || n != 0 {
		t.Errorf("before the first key press %d steps show (%v); want none", n, err)
	}
	within(t, tab, chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight))
	waitFor(t, tab, "step 3", `document.getElementById("replay-caption").textContent.startsWith("Step 3 of ")`)
	groups, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#replay-lanes [data-step]:not(.later)')].map(e => e.getAttribute("data-step"))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if n, _ := strconv.Atoi(g); n < 1 || n > 3 {
			t.Errorf("after 3 key presses step %s shows; want only steps 1 to 3", g)
		}
	}
	if len(groups) < 3 {
		t.Errorf("after 3 key presses %d marks show; want at least 3", len(groups))
	}
	within(t, tab, chromedp.KeyEvent(kb.ArrowLeft))
	waitFor(t, tab, "step 2 after going back", `document.getElementById("replay-caption").textContent.startsWith("Step 2 of ")`)
	// Space on the focused "next step" button is one step, not two (the
	// button's click and the page's key both moving).
	within(t, tab, chromedp.Focus(chromedp.CSS("#replay-next")), chromedp.KeyEvent(" "))
	waitFor(t, tab, "step 3 after a space on the button", `document.getElementById("replay-caption").textContent.startsWith("Step 3 of ")`)
	within(t, tab, chromedp.Sleep(300*time.Millisecond))
	if got := text(t, tab, "#replay-caption"); !strings.HasPrefix(got, "Step 3 of ") {
		t.Errorf("one space on the focused button moved to %q; want step 3", got)
	}
}

func countOf(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if l == want {
			n++
		}
	}
	return n
}

// classroomStories: the stories told after the first three are on the
// page too. six-of-five has its button and its curl lines; stale-plan,
// which plays over minutes, has none and says how racelab run plays it
// on these stores; a subscriber who cancels shows as cancelled, with what
// the store's plan read answered.
func classroomStories(t *testing.T, browser context.Context) {
	addr, _ := startServe(t, "--store", "naive=kv", "--store", "fixed=sqlite", "--quiet")
	tab, _ := tab(t, browser) // closed before serve stops
	within(t, tab, chromedp.Navigate("http://"+addr+"/"))
	waitFor(t, tab, "the live stream", `document.getElementById("conn").textContent.includes("live")`)
	if got := text(t, tab, `section[data-story="six-of-five"] button.fire`); got != "Fire 12 at once" {
		t.Errorf("six-of-five's button says %q; want %q", got, "Fire 12 at once")
	}
	if got, want := text(t, tab, `section[data-story="six-of-five"] article[data-store="naive"] pre.curl`),
		"curl -X POST http://"+addr+"/naive/limit/bot\ncurl http://"+addr+"/naive/limit/bot"; got != want {
		t.Errorf("six-of-five's curl lines read %q; want %q", got, want)
	}
	buttons, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('section[data-story="stale-plan"] button.fire').length`))
	if err != nil || buttons != 0 {
		t.Errorf("stale-plan has %d burst buttons (%v); want none", buttons, err)
	}
	if got := text(t, tab, `section[data-story="stale-plan"] .no-burst p`); !strings.HasPrefix(got, "No burst button: stale-plan plays over minutes") {
		t.Errorf("stale-plan says %q; want why it has no burst button", got)
	}
	run := "racelab run stale-plan -t naive=http://" + addr + "/naive -t fixed=http://" + addr + "/fixed --expect naive=breaks --bound 2s"
	if got := text(t, tab, `section[data-story="stale-plan"] .no-burst pre`); !strings.HasPrefix(got, run) {
		t.Errorf("stale-plan's run line reads %q; want it to start %q", got, run)
	}
	for _, call := range []string{"POST /subscribe/grace", "POST /original/grace", "POST /cancel/grace", "GET /plan/grace"} {
		method, path, _ := strings.Cut(call, " ")
		req, err := http.NewRequest(method, "http://"+addr+"/fixed"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s /fixed%s = %d; want 200", method, path, resp.StatusCode)
		}
	}
	cell := func(field string) string {
		return fmt.Sprintf(`section[data-story="stale-plan"] article[data-store="fixed"] tr[data-key="grace"] [data-field=%q]`, field)
	}
	waitFor(t, tab, "the subscriber's 4 requests", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === "4"`, cell("requests")))
	waitFor(t, tab, "the original counted", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === "1"`, cell("stored")))
	if got := text(t, tab, cell("plan")); !strings.HasPrefix(got, "cancelled · reads ") {
		t.Errorf("the plan reads %q; want cancelled, then what the plan read answered", got)
	}
}
