package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// lostDepositFile is the SQL race the serve --race tests show.
const lostDepositFile = "../../scenarios/races/sql/lost-deposit.race.yaml"

// TestServeRaceUsage: --race takes SQL race files and databases only, a
// database needs --race, and each mistake is one line and exit 2 before
// anything listens.
func TestServeRaceUsage(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	httpRace := filepath.Join(t.TempDir(), "coupon.race.yaml")
	if err := os.WriteFile(httpRace, []byte("race: coupon\nrequests: 2\nburst:\n  - request: POST /redeem/{{key}}\nrule: allowed <= 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "--store", "rc=" + db}, "--store rc=" + db + " is a database, which serves no HTTP contract; race a SQL race file's transactions on it with --race FILE.race.yaml"},
		{[]string{"serve", "--store", db}, "is a database, which serves no HTTP contract"},
		{[]string{"serve", "--race", lostDepositFile, "--store", "naive=kv"}, "--store naive=kv: --race plays its transactions on databases; want NAME=postgres://…?isolation=read-committed, NAME=mysql://…?isolation=… or NAME=sqlite:PATH"},
		{[]string{"serve", "--race", lostDepositFile, "--store", "rc=" + db, "--store", "fixed=sqlite"}, "--store fixed=sqlite: --race plays its transactions on databases"},
		{[]string{"serve", "--race", lostDepositFile}, "--race needs a database to race on: --store NAME=URL"},
		{[]string{"serve", "--race", lostDepositFile, "--store", db}, "--store " + db + ": name the database, as in --store db=" + db},
		{[]string{"serve", "--race", httpRace, "--store", "rc=" + db}, "--race " + httpRace + ": serve plays SQL race files (a burst of transaction:); race an HTTP race file with racelab run " + httpRace + " -t http://…"},
		{[]string{"serve", "--race", "no-such.race.yaml", "--store", "rc=" + db}, "no-such.race.yaml"},
		{[]string{"serve", "--race", lostDepositFile, "--store", "rc=" + db, "--bug", "double-decode"}, "--bug double-decode changes the HTTP contract, which --race's databases do not serve"},
		{[]string{"serve", "--race", lostDepositFile, "--store", "rc=" + db + "?isolation=read-committed"}, "want one of serializable"},
	} {
		code, stdout, stderr := execute(context.Background(), tt.args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.says) {
			t.Errorf("racelab %s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q",
				strings.Join(tt.args, " "), code, stdout, stderr, tt.says)
		}
	}
}

// TestServeRace: racelab serve --race over two SQLite files, as a
// teacher runs it: the page's config shows the race beside both, its
// button plays one trial on each (both hold: SQLite refuses the second
// writer busy), and serve stops cleanly, saying which race it showed.
func TestServeRace(t *testing.T) {
	dir := t.TempDir()
	a, b := "sqlite:"+filepath.Join(dir, "a.db"), "sqlite:"+filepath.Join(dir, "b.db")
	addr, stop := startServe(t, "--race", lostDepositFile, "--store", "one="+a, "--store", "two="+b)
	resp, err := http.Post("http://"+addr+"/classroom/burst", "application/json", strings.NewReader(`{"story":"lost-deposit","requests":2}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var view struct {
		Stores []struct {
			Store, Verdict string
			Allowed        int
			Refused        int
		}
	}
	if err := json.Unmarshal(body, &view); err != nil || resp.StatusCode != 200 {
		t.Fatalf("press the button: %d %s (%v)", resp.StatusCode, body, err)
	}
	if len(view.Stores) != 2 {
		t.Fatalf("the trial reached %d databases; want 2: %s", len(view.Stores), body)
	}
	for i, s := range view.Stores {
		if want := []string{"one", "two"}[i]; s.Store != want || s.Verdict != "✓ holds" || s.Allowed != 1 || s.Refused != 1 {
			t.Errorf("database %d: %+v; want %s: ✓ holds, 1 allowed, 1 refused", i, s, want)
		}
	}
	code, stderr := stop()
	if code != 0 || !strings.Contains(stderr, "racelab serve: race lost-deposit on one ("+a+"), two ("+b+"); Ctrl-C stops") || !strings.HasSuffix(stderr, "racelab serve: stopped\n") {
		t.Errorf("serve --race: exit %d, stderr %q; want exit 0 naming the race and its databases, then stopped", code, stderr)
	}
}

// classroomRace (TestClassroomInBrowser): serve --race over two SQLite
// files; the teacher presses the race's button, and the page shows for
// each database its verdict, a lane per transaction with the one that
// committed and the one aborted, and each transaction in words; no key
// tables, curl lines or request log, which a database has no use for;
// and the replay steps through the trial.
func classroomRace(t *testing.T, browser context.Context) {
	dir := t.TempDir()
	addr, _ := startServe(t, "--race", lostDepositFile, "--quiet",
		"--store", "one=sqlite:"+filepath.Join(dir, "one.db"), "--store", "two=sqlite:"+filepath.Join(dir, "two.db"))
	tab, _ := tab(t, browser) // closed before serve stops
	const story = "lost-deposit"
	fire := fmt.Sprintf(`section[data-story=%q] button.fire`, story)
	within(t, tab, chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS(fire)))
	if got := text(t, tab, fire); got != "Run 2 transactions at once on each database" {
		t.Errorf("the button says %q", got)
	}
	within(t, tab, chromedp.Click(chromedp.CSS(fire)))
	for _, store := range []string{"one", "two"} {
		waitFor(t, tab, store+"'s trial", fmt.Sprintf(`document.querySelector(%q).textContent !== ""`, storeCell(story, store, "verdict")))
		if got := text(t, tab, storeCell(story, store, "verdict")); got != "✓ holds" {
			t.Errorf("%s's verdict reads %q; want ✓ holds", store, got)
		}
		lanes, err := chromedp.Run(tab, chromedp.Evaluate[[]string](fmt.Sprintf(
			`[...document.querySelectorAll('section[data-story=%q] figure[data-store=%q] svg text')].map(e => e.textContent)`, story, store)))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"aborted SQLITE_BUSY", "committed", "#1", "#2"} {
			if countOf(lanes, want) == 0 {
				t.Errorf("%s's lanes show no %q: %q", store, want, lanes)
			}
		}
		txs, err := chromedp.Run(tab, chromedp.Evaluate[[]string](fmt.Sprintf(
			`[...document.querySelectorAll('section[data-story=%q] article[data-store=%q] ol.txs li strong')].map(e => e.textContent).sort()`, story, store)))
		if err != nil || len(txs) != 2 || !strings.HasSuffix(txs[0], " aborted (SQLITE_BUSY)") && !strings.HasSuffix(txs[1], " aborted (SQLITE_BUSY)") {
			t.Errorf("%s's transactions in words: %q (%v); want one committed, one aborted (SQLITE_BUSY)", store, txs, err)
		}
	}
	gone, err := chromedp.Run(tab, chromedp.Evaluate[string](`[
		document.querySelectorAll('table.keys, pre.curl').length,
		document.querySelector('.log-section').hidden].join(' ')`))
	if err != nil || gone != "0 true" {
		t.Errorf("key tables and curl lines, log hidden: %q (%v); want \"0 true\"", gone, err)
	}
	// The replay steps through the trial just played, one database after
	// the other.
	within(t, tab, chromedp.Click(chromedp.CSS("#tab-replay")))
	waitFor(t, tab, "the trial's replay", `document.getElementById("replay-heading").textContent.startsWith("1 of 2. one (sqlite:")`)
	within(t, tab, chromedp.KeyEvent(kb.ArrowRight))
	waitFor(t, tab, "its first step", `document.getElementById("replay-caption").textContent.startsWith("Step 1 of ")`)
}
