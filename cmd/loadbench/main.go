// Command loadbench measures `racelab load` next to hey, wrk and vegeta,
// in one run, against the same `racelab serve` on loopback; `make
// bench-load` runs it.
//
// It starts `racelab serve --store sqlite --max-conns 4096` on a free port
// and, for each concurrency C (-c, default 50,256), runs every client for
// -d (default 10s) in turn, closed model, on two workloads:
//
//   - hit: POST /hit/{slug}, over 1,000 slugs for racelab (--keys 1000),
//     wrk (a Lua script) and vegeta (a target list); hey takes one URL,
//     so it posts to one slug, which a SQLite upsert serializes;
//   - get: GET /get/{slug} of one slug, the same for every client.
//
// and prints one table: requests/s, p50, p99 and the client's peak RSS
// (the kernel's maxrss of the child). Then:
//
//   - pinned: the client-bound table (pinned.go): a server of its own on
//     core 0, racelab, hey and wrk in turn on core 1, C = -pin-c (50) for
//     -pin-d (8s), -pin-runs (3) rounds, with each client's CPU time and
//     racelab's ratios against the goals ≥ 1.2× hey and ≥ 0.8× wrk;
//   - rate: `racelab load --rate R` and `vegeta attack -rate R` at each
//     -rates, with the achieved rate against the asked one;
//   - rss: racelab's peak RSS at C = -rss-c (1,000) for -rss-d (30s);
//   - stall: an in-process server that stalls every request for 1s every
//     5s, loaded for 20s at -stall-rate by racelab's open model and by
//     hey -c 10 (whose workers wait out each stall with one slow request
//     each, so the stall hardly shows among their answers): both p99s.
//
// Goals (from the issue) are printed beside each figure: closed
// throughput ≥ 1.0× hey and ≥ 0.8× wrk, achieved rate within 1%, RSS ≤ 100
// MB at C = 1,000. A client that is not installed is skipped with a line
// saying how to install it.
//
// Usage:
//
//	go run ./cmd/loadbench [-racelab bin/racelab] [-c 50,256] [-d 10s] [-rates 250,500,1000] [-only closed,pinned,rate,rss,stall]
//
// hey and wrk are Debian packages (apt-get install -y hey wrk); vegeta is
// go install github.com/tsenart/vegeta/v12@v12.13.0.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

type options struct {
	racelab   string
	cs        []int
	d         time.Duration
	rates     []int
	rssC      int
	rssD      time.Duration
	stallRate int
	only      string
	pin       pinned
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var o options
	fs := flag.NewFlagSet("loadbench", flag.ExitOnError)
	fs.StringVar(&o.racelab, "racelab", "bin/racelab", "the racelab binary to measure (and to serve with)")
	cs := fs.String("c", "50,256", "concurrencies of the closed-model runs")
	fs.DurationVar(&o.d, "d", 10*time.Second, "length of each run")
	rates := fs.String("rates", "250,500,1000", "rates of the open-model runs, per second")
	fs.IntVar(&o.rssC, "rss-c", 1000, "concurrency of the peak-RSS run (0 skips it)")
	fs.DurationVar(&o.rssD, "rss-d", 30*time.Second, "length of the peak-RSS run")
	fs.IntVar(&o.stallRate, "stall-rate", 200, "rate of the coordinated-omission run (0 skips it)")
	fs.StringVar(&o.only, "only", "", "run only these parts, comma-separated: closed, pinned, rate, rss, stall")
	fs.IntVar(&o.pin.c, "pin-c", 50, "concurrency of the pinned, client-bound runs")
	fs.DurationVar(&o.pin.d, "pin-d", 8*time.Second, "length of each pinned run")
	fs.IntVar(&o.pin.runs, "pin-runs", 3, "rounds of the pinned runs (racelab, hey and wrk in turn in each)")
	fs.StringVar(&o.pin.store, "pin-store", "sqlite", "store of the server the pinned runs load")
	fs.StringVar(&o.pin.call, "pin-call", "get", "request of the pinned runs: get (GET /get/{slug}) or hit (POST /hit/{slug})")
	_ = fs.Parse(os.Args[1:])
	var err error
	if o.cs, err = ints(*cs); err == nil {
		o.rates, err = ints(*rates)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a list of whole numbers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func (o options) part(name string) bool {
	return o.only == "" || strings.Contains(","+o.only+",", ","+name+",")
}

// measured is one client's run.
type measured struct {
	rps      float64
	p50, p99 time.Duration
	rssMB    float64
	cpu      time.Duration // the client's user and system time
	note     string
}

func run(ctx context.Context, o options, w io.Writer) error {
	base, stopServer, err := startServer(ctx, o.racelab, "sqlite", "")
	if err != nil {
		return err
	}
	defer stopServer()
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(w, "loadbench: racelab serve --store sqlite at %s; each run %s; GOMAXPROCS of this machine: %d cores\n\n", base, o.d, numCPU())
	if o.part("closed") {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "workload\tC\tclient\treq/s\tp50\tp99\tpeak RSS\tvs racelab\t")
		for _, c := range o.cs {
			for _, wl := range []string{"hit", "get"} {
				results := map[string]measured{}
				for _, client := range []string{"racelab", "hey", "wrk", "vegeta"} {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					m, err := closedRun(ctx, o, dir, base, client, wl, c)
					if err != nil {
						m.note = err.Error()
					}
					results[client] = m
					ratio := ""
					if r := results["racelab"].rps; client != "racelab" && m.rps > 0 && r > 0 {
						ratio = fmt.Sprintf("racelab %.2f×", r/m.rps)
					}
					if m.note != "" {
						fmt.Fprintf(tw, "%s\t%d\t%s\t-\t-\t-\t-\t%s\t\n", wl, c, client, m.note)
						continue
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%s\t%s\t%.0f MB\t%s\t\n", wl, c, client, m.rps, round(m.p50), round(m.p99), m.rssMB, ratio)
				}
			}
		}
		tw.Flush()
		fmt.Fprintln(w, "goals: racelab ≥ 1.0× hey and ≥ 0.8× wrk (vs racelab above is racelab's req/s over the client's)")
		fmt.Fprintln(w)
	}
	if o.part("pinned") {
		if err := pinnedRuns(ctx, o, dir, w); err != nil {
			return err
		}
	}
	if o.part("rate") {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "asked/s\tclient\tsent/s\toff by\tp99\t")
		for _, r := range o.rates {
			m, err := racelabRate(ctx, o, base, r)
			if err != nil {
				fmt.Fprintf(tw, "%d\tracelab\t%s\t\t\t\n", r, err)
			} else {
				fmt.Fprintf(tw, "%d\tracelab\t%.1f\t%+.2f%%\t%s\t\n", r, m.rps, (m.rps/float64(r)-1)*100, round(m.p99))
			}
			m, err = vegetaRate(ctx, o, dir, base, r)
			if err != nil {
				fmt.Fprintf(tw, "%d\tvegeta\t%s\t\t\t\n", r, err)
			} else {
				fmt.Fprintf(tw, "%d\tvegeta\t%.1f\t%+.2f%%\t%s\t\n", r, m.rps, (m.rps/float64(r)-1)*100, round(m.p99))
			}
		}
		tw.Flush()
		fmt.Fprintln(w, "goal: racelab's sent rate within 1% of the asked rate up to the server's capacity")
		fmt.Fprintln(w)
	}
	if o.part("rss") && o.rssC > 0 {
		m, err := closedRunFor(ctx, o, dir, base, "racelab", "hit", o.rssC, o.rssD)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "peak RSS of racelab load at C=%d for %s: %.0f MB (%.0f req/s; goal ≤ 100 MB)\n\n", o.rssC, o.rssD, m.rssMB, m.rps)
	}
	if o.part("stall") && o.stallRate > 0 {
		if err := stallRun(ctx, o, w); err != nil {
			return err
		}
	}
	return nil
}

func round(d time.Duration) string { return results.Round(d).String() }

func numCPU() int {
	b, _ := exec.Command("nproc").Output()
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// startServer starts `racelab serve --store store`, under `taskset -c
// cpus` when cpus is not empty.
func startServer(ctx context.Context, racelab, store, cpus string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "loadbench-serve-")
	if err != nil {
		return "", nil, err
	}
	addrFile := filepath.Join(dir, "addr")
	cmd := exec.CommandContext(ctx, racelab, "serve", "--store", store, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--quiet", "--max-conns", "4096")
	if cpus != "" {
		cmd = exec.CommandContext(ctx, "taskset", append([]string{"-c", cpus}, cmd.Args...)...)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start %s serve: %w (build it with make build)", racelab, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil {
			return "http://" + strings.TrimSpace(string(b)), stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, errors.New("racelab serve did not start within 10s")
		}
	}
}

func closedRun(ctx context.Context, o options, dir, base, client, wl string, c int) (measured, error) {
	return closedRunFor(ctx, o, dir, base, client, wl, c, o.d)
}

// closedRunFor runs one client for d at concurrency c and reads its
// figures off its own output.
func closedRunFor(ctx context.Context, o options, dir, base, client, wl string, c int, d time.Duration) (measured, error) {
	secs := strconv.Itoa(int(d.Seconds()))
	oneURL := base + "/get/bench-slug-1"
	method := "GET"
	if wl == "hit" {
		oneURL, method = base+"/hit/bench-slug-1", "POST"
	}
	var cmd *exec.Cmd
	switch client {
	case "racelab":
		args := []string{"load", "ten-hits-one-view", "-t", base, "-c", strconv.Itoa(c), "--duration", d.String(), "-o", "json", "-q", "--keys", "1000"}
		if wl == "get" {
			args = append(args, "--http-call", "hit=GET /get/{slug}")
		}
		cmd = exec.CommandContext(ctx, o.racelab, args...)
	case "hey":
		cmd = exec.CommandContext(ctx, "hey", "-z", secs+"s", "-c", strconv.Itoa(c), "-m", method, oneURL)
	case "wrk":
		script := filepath.Join(dir, "hit.lua")
		lua := `counter = 0
request = function()
  counter = counter + 1
  return wrk.format("POST", "/hit/bench-slug-" .. (counter % 1000))
end
`
		if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
			return measured{}, err
		}
		args := []string{"-t", "2", "-c", strconv.Itoa(c), "-d", secs + "s", "--latency"}
		if wl == "hit" {
			args = append(args, "-s", script, base)
		} else {
			args = append(args, oneURL)
		}
		cmd = exec.CommandContext(ctx, "wrk", args...)
	case "vegeta":
		tf := filepath.Join(dir, "targets-"+wl)
		var b strings.Builder
		for i := range 1000 {
			if wl == "hit" {
				fmt.Fprintf(&b, "POST %s/hit/bench-slug-%d\n\n", base, i)
			}
		}
		if wl == "get" {
			fmt.Fprintf(&b, "GET %s\n\n", oneURL)
		}
		if err := os.WriteFile(tf, []byte(b.String()), 0o644); err != nil {
			return measured{}, err
		}
		// -rate=0 with -max-workers is vegeta's closed model.
		cmd = exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf("vegeta attack -targets=%s -rate=0 -max-workers=%d -workers=%d -duration=%s | vegeta report -type=json",
			tf, c, c, d))
	}
	// The client's own program, not cmd's: vegeta runs under sh, which
	// is always there.
	if _, err := exec.LookPath(client); err != nil && client != "racelab" {
		return measured{}, fmt.Errorf("not installed")
	}
	return measure(cmd, client)
}

// measure runs a client's command and reads its figures off its output,
// with its peak RSS and CPU time.
func measure(cmd *exec.Cmd, client string) (measured, error) {
	out, err := runMeasured(cmd)
	if err != nil {
		return measured{}, fmt.Errorf("%s: %w", client, err)
	}
	m, err := parse(client, out)
	m.rssMB, m.cpu = rssOf(cmd), cpuOf(cmd)
	return m, err
}

// runMeasured runs cmd and returns its stdout; rssOf and cpuOf then read
// what it cost.
func runMeasured(cmd *exec.Cmd) ([]byte, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// racelab exits 3 when the rule broke: a GET counts nothing, so the
	// get workload "loses" every hit, and its figures are still good.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 3 && len(out) > 0) {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// rssOf is a finished command's peak RSS in MB; for the vegeta pipeline,
// the shell's largest child's.
func rssOf(cmd *exec.Cmd) float64 {
	if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return float64(u.Maxrss) / 1024 // kilobytes on Linux
	}
	return 0
}

// cpuOf is a finished command's user and system time.
func cpuOf(cmd *exec.Cmd) time.Duration {
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

var (
	heyRPS    = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	heyPct    = regexp.MustCompile(`(\d+)%+ in ([\d.]+) secs`)
	wrkRPS    = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkPct    = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([\d.]+)(us|ms|s)`)
	wrkErrors = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

func parse(client string, out []byte) (measured, error) {
	var m measured
	switch client {
	case "racelab":
		var r results.LoadResult
		if err := json.Unmarshal(out, &r); err != nil || len(r.Targets) != 1 {
			return m, fmt.Errorf("racelab: unreadable result: %v", err)
		}
		t := r.Targets[0]
		if t.Error != "" {
			return m, errors.New(t.Error)
		}
		m.rps, m.p50, m.p99 = t.Throughput(), t.Latency.P50, t.Latency.P99
	case "hey":
		if s := heyRPS.FindSubmatch(out); s != nil {
			m.rps, _ = strconv.ParseFloat(string(s[1]), 64)
		}
		for _, s := range heyPct.FindAllSubmatch(out, -1) {
			v, _ := strconv.ParseFloat(string(s[2]), 64)
			switch string(s[1]) {
			case "50":
				m.p50 = time.Duration(v * float64(time.Second))
			case "99":
				m.p99 = time.Duration(v * float64(time.Second))
			}
		}
	case "wrk":
		if s := wrkRPS.FindSubmatch(out); s != nil {
			m.rps, _ = strconv.ParseFloat(string(s[1]), 64)
		}
		for _, s := range wrkPct.FindAllSubmatch(out, -1) {
			d, _ := time.ParseDuration(string(s[2]) + string(s[3]))
			if string(s[1]) == "50" {
				m.p50 = d
			} else {
				m.p99 = d
			}
		}
		if s := wrkErrors.FindSubmatch(out); s != nil {
			m.note = "non-2xx: " + string(s[1])
		}
	case "vegeta":
		var r struct {
			Throughput float64 `json:"throughput"`
			Latencies  struct {
				P50 time.Duration `json:"50th"`
				P99 time.Duration `json:"99th"`
			} `json:"latencies"`
			Success float64 `json:"success"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return m, fmt.Errorf("vegeta: unreadable report: %v", err)
		}
		m.rps, m.p50, m.p99 = r.Throughput, r.Latencies.P50, r.Latencies.P99
	}
	if m.rps == 0 {
		return m, fmt.Errorf("%s: no requests/s in its output", client)
	}
	return m, nil
}

func racelabRate(ctx context.Context, o options, base string, r int) (measured, error) {
	cmd := exec.CommandContext(ctx, o.racelab, "load", "ten-hits-one-view", "-t", base, "--rate", fmt.Sprintf("%d/s", r),
		"--duration", o.d.String(), "-o", "json", "-q", "--keys", "1000")
	out, err := runMeasured(cmd)
	if err != nil {
		return measured{}, err
	}
	rss := rssOf(cmd)
	var res results.LoadResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Targets) != 1 {
		return measured{}, fmt.Errorf("unreadable result: %v", err)
	}
	t := res.Targets[0]
	return measured{rps: t.SentRate(), p50: t.Latency.P50, p99: t.Latency.P99, rssMB: rss}, nil
}

func vegetaRate(ctx context.Context, o options, dir, base string, r int) (measured, error) {
	if _, err := exec.LookPath("vegeta"); err != nil {
		return measured{}, errors.New("not installed")
	}
	tf := filepath.Join(dir, "targets-rate")
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "POST %s/hit/bench-rate-%d\n\n", base, i)
	}
	if err := os.WriteFile(tf, []byte(b.String()), 0o644); err != nil {
		return measured{}, err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf("vegeta attack -targets=%s -rate=%d/s -duration=%s | vegeta report -type=json", tf, r, o.d))
	out, err := runMeasured(cmd)
	if err != nil {
		return measured{}, err
	}
	var rep struct {
		Rate      float64 `json:"rate"`
		Latencies struct {
			P99 time.Duration `json:"99th"`
		} `json:"latencies"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return measured{}, err
	}
	return measured{rps: rep.Rate, p99: rep.Latencies.P99}, nil
}

// stallRun serves the contract in this process, stalling every request
// for 1 s every 5 s (the first second of each five), and loads it for
// 20 s with racelab's open model and with hey at one worker per ten
// requests a second.
func stallRun(ctx context.Context, o options, w io.Writer) error {
	tg, err := targets.Open(ctx, "actor", targets.WithVirtualTime(false))
	if err != nil {
		return err
	}
	defer tg.Close()
	h := server.New(tg.Store)
	start := time.Now()
	stalling := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if since := time.Since(start) % (5 * time.Second); since < time.Second {
			time.Sleep(time.Second - since)
		}
		h.ServeHTTP(rw, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.Server{Handler: stalling}.Serve(sctx, ln) }()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()
	d := 20 * time.Second
	rl, err := racelabRate(ctx, options{racelab: o.racelab, d: d}, base, o.stallRate)
	if err != nil {
		return fmt.Errorf("racelab on the stalling server: %w", err)
	}
	line := fmt.Sprintf("server stalling 1s every 5s, %d req/s asked: racelab open model p99 %s", o.stallRate, round(rl.p99))
	if _, err := exec.LookPath("hey"); err == nil {
		// hey's workers wait out each stall: one slow answer a worker a
		// stall, among the thousands each sends between stalls.
		m, err := measure(exec.CommandContext(ctx, "hey", "-z", "20s", "-c", "10", "-m", "POST", base+"/hit/stall-slug"), "hey")
		if err != nil {
			return err
		}
		line += fmt.Sprintf("; hey -c 10 p99 %s (at %.0f req/s)", round(m.p99), m.rps)
	} else {
		line += "; hey not installed (apt-get install -y hey)"
	}
	fmt.Fprintln(w, line)
	return nil
}
