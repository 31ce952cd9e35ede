package scenarios

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/shop"
)

// soldMarkScripts is how many scripts of seed 7 each sold-mark test plays:
// the README's figures are these tests' (go test -run SoldMark ./scenarios/).
const soldMarkScripts = 200

// heardAt is when the shop heard A's "completed": the start of the hold.
func heardAt(t *testing.T, tr results.Trial) time.Duration {
	t.Helper()
	for _, st := range tr.Requests[0].Steps {
		if st.Op == "event" && st.Value == "completed" {
			return st.At
		}
	}
	t.Fatalf("trial %d: A's lane has no completed event: %+v", tr.Index, tr.Requests[0].Steps)
	return 0
}

func lastNote(r results.Request) string {
	if len(r.Steps) == 0 {
		return ""
	}
	return r.Steps[len(r.Steps)-1].Note
}

func TestSoldMarkHoldsWhileItLasts(t *testing.T) {
	for i := range soldMarkScripts {
		for _, stale := range []bool{false, true} {
			tr, err := playSoldMark(t.Context(), 7, i, stale)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Requests[0].Outcome != results.Allowed {
				t.Fatalf("trial %d: A did not buy: %+v", i, tr.Requests[0])
			}
			// C inside the hold: the lock refuses, naming when the hold ends.
			end := targets.DefaultStart.Add(heardAt(t, tr) + shop.SoldHold).UTC().Format("2006-01-02 15:04:05")
			c := tr.Requests[1]
			if c.Outcome != results.Refused || !strings.Contains(lastNote(c), "is sold: the lock holds it until "+end+" UTC") {
				t.Errorf("trial %d stale=%v: C inside the hold: %v %q, want refused until %s", i, stale, c.Outcome, lastNote(c), end)
			}
			if c.Invoke >= heardAt(t, tr)+shop.SoldHold {
				t.Errorf("trial %d: C's first checkout at %v is not inside the hold", i, c.Invoke)
			}
		}
	}
}

func TestSoldMarkPropagatedRefusesAfterTheHold(t *testing.T) {
	for i := range soldMarkScripts {
		tr, err := playSoldMark(t.Context(), 7, i, false)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Broken || tr.Counted != 1 || tr.Allowed != 1 {
			t.Errorf("trial %d: sold %d times, %d allowed (%s); want once", i, tr.Counted, tr.Allowed, tr.Why)
		}
		check := tr.Requests[0].Steps[len(tr.Requests[0].Steps)-1]
		if check.Value != "KV mark sold at 6 of 6 locations" {
			t.Errorf("trial %d: a minute before the hold ends: %q, want every location", i, check.Value)
		}
		for _, j := range []int{2, 3} {
			r := tr.Requests[j]
			if r.Outcome != results.Refused || lastNote(r) != "KV: sold" {
				t.Errorf("trial %d: #%d after the hold: %v %q, want refused by the KV mark", i, j+1, r.Outcome, lastNote(r))
			}
			if r.Invoke < heardAt(t, tr)+shop.SoldHold {
				t.Errorf("trial %d: #%d at %v is not after the hold", i, j+1, r.Invoke)
			}
		}
	}
}

func TestSoldMarkStaleCacheSellsTwice(t *testing.T) {
	for i := range soldMarkScripts {
		tr, err := playSoldMark(t.Context(), 7, i, true)
		if err != nil {
			t.Fatal(err)
		}
		check := tr.Requests[0].Steps[len(tr.Requests[0].Steps)-1]
		if !strings.HasPrefix(check.Value, "KV mark sold at 5 of 6 locations, still unsold at ") {
			t.Errorf("trial %d: a minute before the hold ends: %q, want one location unsold", i, check.Value)
		}
		if d := tr.Requests[3]; d.Outcome != results.Allowed {
			t.Errorf("trial %d: D after the hold on the stale location: %v %q, want a second sale", i, d.Outcome, lastNote(d))
		}
		if !tr.Broken || tr.Counted != 2 || !strings.Contains(tr.Why, "still read unsold") {
			t.Errorf("trial %d: broken=%v counted=%d why=%q; want painting sold twice", i, tr.Broken, tr.Counted, tr.Why)
		}
	}
}

func TestSoldMarkSameSeedSameScript(t *testing.T) {
	play := func(seed int64) string {
		tr, err := playSoldMark(t.Context(), seed, 3, true)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := play(11), play(11); a != b {
		t.Errorf("seed 11 played twice differs:\n%s\n%s", a, b)
	}
	if a, b := play(11), play(12); a == b {
		t.Errorf("seeds 11 and 12 played the same script: %s", a)
	}
}

// A buyer refused while another's reservation runs is told the instant it
// ends and how long that is from the refusal: the payment part's 409.
func TestPaymentRefusalSaysWhenFree(t *testing.T) {
	found := 0
	for i := range 40 {
		tr, err := playPayment(t.Context(), shop.DesignExpireFirst, 5, i)
		if err != nil {
			t.Fatal(err)
		}
		b := tr.Requests[1]
		for _, st := range b.Steps {
			if st.Op != "refuse" || !strings.Contains(st.Note, "being checked out") {
				continue
			}
			found++
			// A reserved at 0:00, so the reservation ends at 0:07.
			end := targets.DefaultStart.Add(shop.Reservation).UTC().Format("15:04:05")
			left := (shop.Reservation - st.At).Round(time.Second)
			want := "painting-2 is being checked out: reserved until " + end + " UTC, free again in " + left.String()
			if st.Note != want {
				t.Errorf("trial %d: B refused at %v: %q, want %q", i, st.At, st.Note, want)
			}
		}
	}
	if found == 0 {
		t.Fatal("no payment script of seed 5 refused B during A's reservation")
	}
}
