package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// startTestReferee serves the referee in-process on loopback until the
// test ends.
func startTestReferee(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrFile := filepath.Join(t.TempDir(), "addr")
	done := make(chan error, 1)
	go func() { done <- serveReferee(ctx, addrFile) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("referee: %v", err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return "http://" + string(b)
		}
		if time.Now().After(deadline) {
			t.Fatal("the referee did not start")
		}
	}
}

func bursts(t *testing.T, base string) []burstStat {
	t.Helper()
	resp, err := http.Get(base + "/referee/bursts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []burstStat
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSinglePacketAtTheReferee: the floor client's burst of n over h2c is
// answered in full, and the referee counts exactly n arrivals for its key,
// with a spread no wider than the time the burst took; asked again, it has
// nothing new.
func TestSinglePacketAtTheReferee(t *testing.T) {
	base := startTestReferee(t)
	const n = 200
	start := time.Now()
	if err := singlePacket(base, n, "floor-k"); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	got := bursts(t, base)
	if len(got) != 1 || got[0].Key != "floor-k" || got[0].Requests != n {
		t.Fatalf("the referee saw %+v, want floor-k hit %d times", got, n)
	}
	if d := time.Duration(got[0].Spread); d < 0 || d > took || len(got[0].Deciles) != 9 {
		t.Errorf("spread %v, deciles %v; want between 0 and the burst's %v, and 9 deciles", d, got[0].Deciles, took)
	}
	if again := bursts(t, base); len(again) != 0 {
		t.Errorf("asked again, the referee saw %+v, want nothing new", again)
	}
}

// TestRefereeSpeaksTheContract: concurrent HTTP/1.1 hits on one key are
// each answered with a distinct total in the contract's shape, and get
// reads the count; anything else is 404.
func TestRefereeSpeaksTheContract(t *testing.T) {
	base := startTestReferee(t)
	const n = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for range n {
		wg.Go(func() {
			resp, err := http.Post(base+"/hit/k", "", nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			mu.Lock()
			seen[string(b)] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(seen) != n || !seen[`{"slug":"k","views":20}`+"\n"] {
		t.Errorf("%d distinct answers %v, want %d ending with 20 views", len(seen), seen, n)
	}
	for path, want := range map[string]string{"/get/k": `"views":20`, "/nothing": "not found"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), want) {
			t.Errorf("GET %s = %d %s, want %s", path, resp.StatusCode, b, want)
		}
	}
	if got := bursts(t, base); len(got) != 1 || got[0].Requests != n {
		t.Errorf("the referee saw %+v, want k hit %d times", got, n)
	}
}

// TestRefereeFlagDefaults: -referee measures N=10, 100 and 1,000 in 5
// bursts a client unless told otherwise.
func TestRefereeFlagDefaults(t *testing.T) {
	o, err := parseFlags([]string{"-referee"})
	if err != nil || !slices.Equal(o.ns, []int{10, 100, 1000}) || o.trials != 5 || o.runs != 3 {
		t.Errorf("-referee: %+v, %v; want -n 10,100,1000 -trials 5 -runs 3", o, err)
	}
	o, err = parseFlags([]string{"-referee", "-n", "300", "-trials", "2"})
	if err != nil || !slices.Equal(o.ns, []int{300}) || o.trials != 2 {
		t.Errorf("-referee -n 300 -trials 2: %+v, %v", o, err)
	}
	if _, err := parseFlags([]string{"-referee", "-runs", "0"}); err == nil {
		t.Error("-runs 0: no error, want 1 or more")
	}
}
