package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/racelab/racelab/internal/loadavg"
)

// Goals of issue 38: at every N racelab's median spread within floorGoal
// times the single-packet floor's of the same run, pinned and unpinned,
// and at least heyGoal(N) times tighter than hey's, unpinned, in every
// run (on 2 shared cores the floor itself is only about 9× tighter than
// hey at N=100).
const floorGoal = 1.5

func heyGoal(n int) float64 {
	if n <= 10 {
		return 8
	}
	return 5
}

// heyGoalOf is heyGoal, or through the jitter proxy 20× at every N: a
// burst in one packet crosses it as one chunk, hey's connections as many.
func heyGoalOf(n int, proxied bool) float64 {
	if proxied {
		return 20
	}
	return heyGoal(n)
}

// floorRun is one run's bursts of one size, by client, each one spread at
// the referee.
type floorRun struct {
	load                            string
	floor, racelab, baseline, heyDs []time.Duration
}

// runFloor measures, at a neutral referee (see referee), the arrival spread
// of bursts of each N from the referee's own single-packet client, racelab
// (--sync h2) and hey, taken in turn within each run, and prints, for each
// N, each run's medians and ratios against the goals. With o.pin the
// referee runs under taskset -c 1 and every client under taskset -c 0, so
// the two sides have a core each and neither steals the other's.
func runFloor(ctx context.Context, o options, out io.Writer) error {
	hey, err := exec.LookPath("hey")
	if err != nil {
		return errors.New("hey is not installed; apt-get install -y hey")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	serverCPU, clientCPU := "", ""
	if o.pin {
		if _, err := exec.LookPath("taskset"); err != nil {
			return errors.New("-pin needs taskset (util-linux)")
		}
		serverCPU, clientCPU = "1", "0"
	}
	runID := newID()
	runs := make([][]floorRun, len(o.ns)) // by N, then run
	proxied := make([][]floorRun, len(o.ns))
	for run := range o.runs {
		base, stop, err := startReferee(ctx, pinned(ctx, serverCPU, self, "serve-referee"))
		if err != nil {
			return err
		}
		for ni, n := range o.ns {
			r, err := floorBursts(ctx, o, base, base, clientCPU, self, hey, fmt.Sprintf("%s-%d-%d", runID, run, n), n)
			if err != nil {
				_ = stop()
				return err
			}
			runs[ni] = append(runs[ni], r)
		}
		if o.spread != "" && !o.pin {
			if err := proxyRun(ctx, o, base, self, hey, fmt.Sprintf("%s-%d-proxy", runID, run), proxied); err != nil {
				_ = stop()
				return err
			}
		}
		if err := stop(); err != nil {
			return fmt.Errorf("stop the referee: %w", err)
		}
	}
	for ni, n := range o.ns {
		if err := printFloor(out, o, n, runs[ni], false); err != nil {
			return err
		}
	}
	for ni, n := range o.ns {
		if len(proxied[ni]) > 0 {
			if err := printFloor(out, o, n, proxied[ni], true); err != nil {
				return err
			}
		}
	}
	return nil
}

// proxyRun takes every client's bursts of each N through `spread proxy`
// (o.spread), which delays each chunk a connection sends by 1 ms + U(0,
// 3 ms), in front of the referee at base, into proxied.
func proxyRun(ctx context.Context, o options, base, self, hey, id string, proxied [][]floorRun) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, o.spread, "proxy", "-listen", addr, "-to", strings.TrimPrefix(base, "http://"))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start spread proxy: %w", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return errors.New("spread proxy did not listen within 10s")
		}
	}
	for ni, n := range o.ns {
		r, err := floorBursts(ctx, o, base, "http://"+addr, "", self, hey, fmt.Sprintf("%s-%d", id, n), n)
		if err != nil {
			return fmt.Errorf("through spread proxy: %w", err)
		}
		proxied[ni] = append(proxied[ni], r)
	}
	return nil
}

// floorBursts takes o.trials bursts of n from each client in turn, sent
// to send (the referee at base, or a proxy in front of it).
func floorBursts(ctx context.Context, o options, base, send, clientCPU, self, hey, id string, n int) (floorRun, error) {
	r := floorRun{load: loadavg.Three()}
	for b := range o.trials {
		key := fmt.Sprintf("floor-%s-%d", id, b)
		if err := pinned(ctx, clientCPU, self, "single-packet", send, strconv.Itoa(n), key).Run(); err != nil {
			return r, fmt.Errorf("single-packet burst: %w", err)
		}
		d, err := refereeSpread(o, "floor", base, n)
		if err != nil {
			return r, fmt.Errorf("single-packet burst: %w", err)
		}
		r.floor = append(r.floor, d)

		for _, rl := range []struct {
			bin string
			to  *[]time.Duration
		}{{o.racelab, &r.racelab}, {o.baseline, &r.baseline}} {
			if rl.bin == "" {
				continue
			}
			seed := strconv.Itoa(b + 1)
			if _, unsync, err := racelabRun(pinned(ctx, clientCPU, rl.bin, "run", "ten-hits-one-view", "-t", send,
				"-n", strconv.Itoa(n), "--trials", "1", "--sync", "h2", "-o", "json", "-q", "--seed", seed), n); err != nil || unsync > 0 {
				return r, fmt.Errorf("%s --sync h2 -n %d: %w", rl.bin, n, cmp.Or(err, errors.New("answered before its release")))
			}
			if d, err = refereeSpread(o, filepath.Base(rl.bin), base, n); err != nil {
				return r, fmt.Errorf("%s --sync h2 -n %d: %w", rl.bin, n, err)
			}
			*rl.to = append(*rl.to, d)
		}

		key = fmt.Sprintf("hey-%s-%d", id, b)
		heyCmd := pinned(ctx, clientCPU, hey, "-n", strconv.Itoa(n), "-c", strconv.Itoa(n), "-m", "POST", send+"/hit/"+key)
		if msg, err := heyCmd.CombinedOutput(); err != nil {
			return r, fmt.Errorf("hey -n %d -c %d: %w: %s", n, n, err, msg)
		}
		if d, err = refereeSpread(o, "hey", base, n); err != nil {
			return r, fmt.Errorf("hey -n %d -c %d: %w", n, n, err)
		}
		r.heyDs = append(r.heyDs, d)
	}
	return r, nil
}

// printFloor prints the runs of one N, and their ratios against the
// goals: those of a burst at the floor, or, proxied, hey's 20×.
func printFloor(out io.Writer, o options, n int, runs []floorRun, proxied bool) error {
	fmt.Fprintf(out, "arrival spread of a burst of N=%d at a neutral HTTP/2 referee (x/net/http2 h2c, %d streams a connection allowed;\n", n, refereeStreams)
	fmt.Fprintf(out, "each request stamped when its handler has read its last byte, then runtime.Gosched(), as spread's referee; spread = last stamp - first)\n")
	switch {
	case proxied:
		fmt.Fprintf(out, "through spread proxy (every chunk a connection sends delayed 1ms + U(0, 3ms)), unpinned\n")
	case o.pin:
		fmt.Fprintf(out, "pinned: referee under taskset -c 1, every client under taskset -c 0\n")
	default:
		fmt.Fprintf(out, "unpinned: referee and clients share every core\n")
	}
	fmt.Fprintf(out, "each run: a fresh referee, %d bursts of each client taken in turn (floor, racelab, [baseline,] hey, floor, …); median [min–max]\n", o.trials)
	fmt.Fprintf(out, "floor: the referee's own single-packet client (%d streams staged on one connection, then one write of their END_STREAM frames, as spread's h2-single)\n\n", n)
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	head := "run\tload avg (1/5/15 min)\tsingle-packet floor\tracelab --sync h2\they -n N -c N\tracelab ÷ floor\they ÷ racelab\t"
	if o.baseline != "" {
		head += "baseline " + o.baseline + "\tbaseline ÷ floor\t"
	}
	fmt.Fprintln(tw, head)
	nearFloor, farFromHey := 0, 0
	for i, r := range runs {
		fl, rl, hy := quantile(r.floor, 0.5), quantile(r.racelab, 0.5), quantile(r.heyDs, 0.5)
		vsFloor := float64(rl) / float64(max(fl, 1))
		vsHey := float64(hy) / float64(max(rl, 1))
		if vsFloor <= floorGoal {
			nearFloor++
		}
		if vsHey >= heyGoalOf(n, proxied) {
			farFromHey++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f×\t%.1f×\t", i+1, r.load,
			rangeCell(r.floor), rangeCell(r.racelab), rangeCell(r.heyDs), vsFloor, vsHey)
		if o.baseline != "" {
			fmt.Fprintf(tw, "%s\t%.2f×\t", rangeCell(r.baseline), float64(quantile(r.baseline, 0.5))/float64(max(fl, 1)))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nload average after: %s\n", loadavg.Three())
	if !proxied {
		fmt.Fprintf(out, "N=%d goal racelab ÷ floor ≤ %.1f× in every run: %d of %d runs: %s\n", n, floorGoal, nearFloor, len(runs), metOrNot(nearFloor == len(runs)))
	}
	heyNote := ""
	if o.pin {
		heyNote = " (the goal is unpinned)"
	}
	fmt.Fprintf(out, "N=%d goal hey ÷ racelab ≥ %.0f× in every run%s: %d of %d runs: %s\n\n", n, heyGoalOf(n, proxied), heyNote, farFromHey, len(runs), metOrNot(farFromHey == len(runs)))
	return nil
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func rangeCell(ds []time.Duration) string {
	return fmt.Sprintf("%s [%s–%s]", short(quantile(ds, 0.5)), short(quantile(ds, 0)), short(quantile(ds, 1)))
}

// pinned is name args run under taskset -c cpu, or as is when cpu is "".
func pinned(ctx context.Context, cpu, name string, args ...string) *exec.Cmd {
	if cpu == "" {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "taskset", append([]string{"-c", cpu, name}, args...)...)
}

// startReferee starts cmd with the address file to write as its last
// argument, and returns the referee's URL and a function that stops it.
func startReferee(ctx context.Context, cmd *exec.Cmd) (string, func() error, error) {
	dir, err := os.MkdirTemp("", "arrivalbench-")
	if err != nil {
		return "", nil, err
	}
	addrFile := filepath.Join(dir, "addr")
	cmd.Args = append(cmd.Args, addrFile)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start the referee: %w", err)
	}
	stop := func() error {
		defer os.RemoveAll(dir)
		_ = cmd.Process.Signal(os.Interrupt)
		return cmd.Wait()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return "http://" + strings.TrimSpace(string(b)), stop, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = stop()
			return "", nil, errors.New("the referee did not start within 10s")
		}
	}
}

// refereeSpread asks the referee for the keys hit since the last ask: there
// must be one, hit n times, and its spread is the burst's.
func refereeSpread(o options, who, base string, n int) (time.Duration, error) {
	resp, err := http.Get(base + "/referee/bursts")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var stats []burstStat
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		return 0, fmt.Errorf("read the referee's bursts: %w", err)
	}
	if len(stats) != 1 || stats[0].Requests != n {
		return 0, fmt.Errorf("the referee saw %+v, want one key hit %d times", stats, n)
	}
	if o.verbose {
		var ds []string
		for _, d := range stats[0].Deciles {
			ds = append(ds, short(time.Duration(d)))
		}
		fmt.Fprintf(os.Stderr, "%-8s spread %-9s deciles %s\n", who, short(time.Duration(stats[0].Spread)), strings.Join(ds, " "))
	}
	return time.Duration(stats[0].Spread), nil
}
