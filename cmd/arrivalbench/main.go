// Command arrivalbench measures how tightly racelab's bursts arrive at a
// server, next to hey's, against one `racelab serve` in one run; `make
// bench-http` runs it.
//
// It starts `racelab serve --store actor` on a free loopback port (or uses
// -url), then for each N fires -trials bursts of ten-hits-one-view with
// `racelab run --sync MODE -o json` for every mode and reads each burst's
// server-side arrival spread from the JSON, and runs `hey -n N -c N -m POST`
// -hey-runs times on fresh slugs, reading each run's arrival spread from the
// server's GET /stats. The arrival spread is the time between the first and
// the last request of a burst becoming complete at the server, as stamped by
// the server itself, so both tools are measured by the same clock in the same
// place. It prints the median and 90th percentile of each, and how many
// times tighter racelab's median is than hey's.
//
// With -referee (`make bench-floor`) it measures instead at a neutral
// referee (referee.go): an HTTP/1.1 and h2c server built on
// golang.org/x/net/http2 that is neither racelab's nor any client's, and
// stamps each request when its handler has read the request's last byte,
// then yields (runtime.Gosched), as the spread referee does.
// Each of -runs runs starts a fresh referee and takes, for each N (-n,
// 10,100,1000), in turn, -trials bursts from three clients: the referee's own
// single-packet client (floor.go: all N HEADERS+DATA frames in one write
// on one connection, the floor), racelab run ten-hits-one-view --sync h2
// (which reads and judges every answer as always), and hey -n N -c N. It
// prints each run's medians, racelab ÷ floor against the goal of 1.5×
// and hey ÷ racelab against 8× at N=10 and 5× above, with the load
// average beside each run. -pin runs the referee under taskset -c 1 and
// the clients under taskset -c 0; -baseline BIN measures a second racelab binary in the same turns
// (main's, say), so that a change is judged within one run; -spread BIN
// takes every client's bursts once more through `BIN proxy` (each chunk
// delayed 1 ms + U(0, 3 ms)), unpinned, against hey ÷ racelab ≥ 20×.
//
// Usage:
//
//	go run ./cmd/arrivalbench [-racelab bin/racelab] [-n 10,100] [-trials 30] [-hey-runs 15]
//	go run ./cmd/arrivalbench -referee [-pin] [-runs 3] [-trials 5] [-baseline BIN] [-spread BIN] [-v]
//
// hey is the Debian package hey (apt-get install -y hey).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// Goals from the issue: racelab's median arrival spread this many times
// tighter than hey's.
var goals = map[int]float64{10: 5, 100: 3}

type options struct {
	racelab string
	url     string
	store   string
	ns      []int
	modes   []string
	trials  int
	heyRuns int
	// -referee: at the neutral referee against its floor.
	referee  bool
	runs     int
	pin      bool
	verbose  bool
	baseline string
	spread   string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if part, ok := parts[firstArg(os.Args)]; ok {
		if err := part(ctx, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "arrivalbench "+os.Args[1]+":", err)
			os.Exit(1)
		}
		return
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "arrivalbench:", err)
		os.Exit(2)
	}
	do := run
	if o.referee {
		do = runFloor
	}
	if err := do(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "arrivalbench:", err)
		os.Exit(1)
	}
}

// parts are what -referee runs as processes of their own, so that -pin
// can put each on its core.
var parts = map[string]func(ctx context.Context, args []string) error{
	"serve-referee": func(ctx context.Context, args []string) error { // ADDR-FILE
		if len(args) != 1 {
			return errors.New("want serve-referee ADDR-FILE")
		}
		return refereeProcess(ctx, args[0])
	},
	"single-packet": func(_ context.Context, args []string) error { // URL N KEY
		if len(args) != 3 {
			return errors.New("want single-packet URL N KEY")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return fmt.Errorf("burst size %q: want a whole number of at least 1", args[1])
		}
		return singlePacket(args[0], n, args[2])
	},
}

func firstArg(args []string) string {
	if len(args) < 2 {
		return ""
	}
	return args[1]
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("arrivalbench", flag.ContinueOnError)
	fs.StringVar(&o.racelab, "racelab", "bin/racelab", "the racelab binary to measure (and to serve with)")
	fs.StringVar(&o.url, "url", "", "measure against this racelab serve instead of starting one")
	fs.StringVar(&o.store, "store", "actor", "store of the racelab serve started")
	ns := fs.String("n", "10,100", "burst sizes, comma-separated")
	modes := fs.String("modes", "h2,lastbyte,none", "racelab --sync modes to measure, comma-separated")
	fs.IntVar(&o.trials, "trials", 30, "racelab bursts per N and mode")
	fs.IntVar(&o.heyRuns, "hey-runs", 15, "hey runs per N")
	fs.BoolVar(&o.referee, "referee", false, "measure at a neutral HTTP/2 referee against its single-packet floor and hey (-n 10,100,1000 -trials 5 unless given)")
	fs.IntVar(&o.runs, "runs", 3, "with -referee: runs, each with a fresh referee")
	fs.StringVar(&o.baseline, "baseline", "", "with -referee: another racelab binary measured in turn beside -racelab (say, main's)")
	fs.StringVar(&o.spread, "spread", "", "with -referee, unpinned: a spread binary (../shared/tools/spread) whose jitter proxy the bursts are also taken through")
	fs.BoolVar(&o.verbose, "v", false, "with -referee: print each burst's arrival deciles to stderr")
	fs.BoolVar(&o.pin, "pin", false, "with -referee: the referee under taskset -c 1, the clients under taskset -c 0")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.referee {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if !given["n"] {
			*ns = "10,100,1000"
		}
		if !given["trials"] {
			o.trials = 5
		}
	}
	for f := range strings.SplitSeq(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return o, fmt.Errorf("-n %q: want burst sizes of at least 2, such as 10,100", *ns)
		}
		o.ns = append(o.ns, n)
	}
	o.modes = strings.Split(*modes, ",")
	if o.trials < 1 || o.heyRuns < 1 || o.runs < 1 {
		return o, errors.New("-trials, -hey-runs and -runs want 1 or more")
	}
	return o, nil
}

func run(ctx context.Context, o options, out io.Writer) error {
	hey, err := exec.LookPath("hey")
	if err != nil {
		return errors.New("hey is not installed; apt-get install -y hey")
	}
	base := o.url
	if base == "" {
		var stopServer func() error
		base, stopServer, err = startServer(ctx, o)
		if err != nil {
			return err
		}
		defer func() {
			if err := stopServer(); err != nil {
				fmt.Fprintln(os.Stderr, "arrivalbench: stop server:", err)
			}
		}()
	}
	runID := newID()

	type row struct {
		n       int
		racelab map[string][]time.Duration
		unsync  map[string]int
		hey     []time.Duration
	}
	var rows []row
	for _, n := range o.ns {
		r := row{n: n, racelab: map[string][]time.Duration{}, unsync: map[string]int{}}
		for _, mode := range o.modes {
			spreads, unsync, err := racelabSpreads(ctx, o, base, mode, n)
			if err != nil {
				return fmt.Errorf("racelab --sync %s -n %d: %w", mode, n, err)
			}
			r.racelab[mode], r.unsync[mode] = spreads, unsync
		}
		for i := range o.heyRuns {
			d, err := heySpread(ctx, hey, base, fmt.Sprintf("hey-%s-%d-%d", runID, n, i), n)
			if err != nil {
				return fmt.Errorf("hey -n %d -c %d: %w", n, n, err)
			}
			r.hey = append(r.hey, d)
		}
		rows = append(rows, r)
	}

	fmt.Fprintf(out, "server-side arrival spread of one burst (first to last request complete at the server)\n")
	fmt.Fprintf(out, "racelab serve --store %s on loopback, %d racelab bursts per mode and %d hey runs per N; median [90th percentile]\n\n", o.store, o.trials, o.heyRuns)
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', tabwriter.AlignRight)
	header := []string{"N"}
	for _, m := range o.modes {
		header = append(header, "racelab "+m)
	}
	header = append(header, "hey -n N -c N")
	for _, m := range o.modes {
		header = append(header, "hey/"+m)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, r := range rows {
		cells := []string{strconv.Itoa(r.n)}
		heyMedian := quantile(r.hey, 0.5)
		for _, m := range o.modes {
			cells = append(cells, spreadCell(r.racelab[m]))
		}
		cells = append(cells, spreadCell(r.hey))
		for _, m := range o.modes {
			cells = append(cells, ratio(heyMedian, quantile(r.racelab[m], 0.5)))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	for _, r := range rows {
		goal, ok := goals[r.n]
		if !ok {
			continue
		}
		best, bestMode := time.Duration(0), ""
		for _, m := range o.modes {
			if d := quantile(r.racelab[m], 0.5); bestMode == "" || d < best {
				best, bestMode = d, m
			}
		}
		got := float64(quantile(r.hey, 0.5)) / float64(max(best, 1))
		verdict := "met"
		if got < goal {
			verdict = "NOT met"
		}
		fmt.Fprintf(out, "N=%d: racelab (--sync %s) %.1f× tighter than hey; goal %.0f×: %s\n", r.n, bestMode, got, goal, verdict)
	}
	for _, r := range rows {
		for _, m := range o.modes {
			if k := r.unsync[m]; k > 0 {
				fmt.Fprintf(out, "N=%d --sync %s: %d bursts answered before their release (unsynchronized)\n", r.n, m, k)
			}
		}
	}
	return nil
}

// startServer runs `racelab serve` on a free loopback port and returns its
// URL and a function that stops it as Ctrl-C would.
func startServer(ctx context.Context, o options) (string, func() error, error) {
	dir, err := os.MkdirTemp("", "arrivalbench-")
	if err != nil {
		return "", nil, err
	}
	addrFile := filepath.Join(dir, "addr")
	cmd := exec.CommandContext(ctx, o.racelab, "serve", "--store", o.store, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--quiet")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start %s serve: %w", o.racelab, err)
	}
	stop := func() error {
		defer os.RemoveAll(dir)
		_ = cmd.Process.Signal(os.Interrupt)
		return cmd.Wait()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			return "http://" + strings.TrimSpace(string(b)), stop, nil
		}
		if time.Now().After(deadline) {
			_ = stop()
			return "", nil, errors.New("racelab serve did not start within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// racelabSpreads runs racelab's bursts and returns each burst's server-side
// arrival spread, and how many bursts were not synchronized.
func racelabSpreads(ctx context.Context, o options, base, mode string, n int) ([]time.Duration, int, error) {
	spreads, unsync, err := racelabRun(exec.CommandContext(ctx, o.racelab, "run", "ten-hits-one-view", "-t", base, "-n", strconv.Itoa(n),
		"--trials", strconv.Itoa(o.trials), "--sync", mode, "-o", "json", "-q", "--seed", "1"), n)
	if err == nil && slices.Contains(spreads, 0) {
		err = fmt.Errorf("a burst of %d requests without arrival instants", n)
	}
	return spreads, unsync, err
}

// racelabRun runs cmd, a racelab run of bursts of n with -o json, and
// returns each burst's arrival spread as racelab read it from the server,
// and how many bursts were not synchronized. A target's error or a burst
// without its n answers is an error.
func racelabRun(cmd *exec.Cmd, n int) ([]time.Duration, int, error) {
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	// Exit 1 with a report is racelab judging its own burst inconclusive
	// (its goroutines reached the release too far apart, on a loaded
	// machine): the burst was fired all the same and is measured.
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1 || len(stdout) == 0) {
		return nil, 0, err
	}
	var res struct {
		Targets []struct {
			Error  string `json:"error"`
			Trials []struct {
				Requests       []json.RawMessage `json:"requests"`
				ArrivalSpread  int64             `json:"arrival_spread_ns"`
				Unsynchronized bool              `json:"unsynchronized"`
			} `json:"trials"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(stdout, &res); err != nil {
		return nil, 0, fmt.Errorf("read racelab's JSON: %w", err)
	}
	if len(res.Targets) != 1 || res.Targets[0].Error != "" {
		return nil, 0, fmt.Errorf("racelab could not run the target: %+v", res.Targets)
	}
	var spreads []time.Duration
	unsync := 0
	for _, t := range res.Targets[0].Trials {
		if len(t.Requests) != n {
			return nil, 0, fmt.Errorf("a burst with %d of its %d requests", len(t.Requests), n)
		}
		spreads = append(spreads, time.Duration(t.ArrivalSpread))
		if t.Unsynchronized {
			unsync++
		}
	}
	return spreads, unsync, nil
}

// heySpread runs hey's burst of n on a fresh slug and asks the server how
// far apart its requests arrived.
func heySpread(ctx context.Context, hey, base, slug string, n int) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, hey, "-n", strconv.Itoa(n), "-c", strconv.Itoa(n), "-m", "POST", base+"/hit/"+slug)
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	resp, err := http.Get(base + "/stats?route=hit&key=" + url.QueryEscape(slug))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st struct {
		Requests int64 `json:"requests"`
		Spread   int64 `json:"arrival_spread_ns"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, fmt.Errorf("read /stats: %w", err)
	}
	if st.Requests != int64(n) {
		return 0, fmt.Errorf("the server saw %d of hey's %d requests", st.Requests, n)
	}
	return time.Duration(st.Spread), nil
}

// quantile is the q-quantile of ds by nearest rank; zero for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

func spreadCell(ds []time.Duration) string {
	return fmt.Sprintf("%s [%s]", short(quantile(ds, 0.5)), short(quantile(ds, 0.9)))
}

func ratio(hey, racelab time.Duration) string {
	if racelab <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f×", float64(hey)/float64(racelab))
}

// short writes a duration with two or three significant figures.
func short(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d)
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	default:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
}

func newID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
