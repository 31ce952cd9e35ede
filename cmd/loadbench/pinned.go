package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/racelab/racelab/internal/loadavg"
)

// pinned is the client-bound comparison (issue 24 part 3): the server on
// core 0, each client in turn on core 1, so that what a client spends a
// request, not the server's share of a shared core, sets its req/s.
type pinned struct {
	c     int
	d     time.Duration
	runs  int
	store string
	call  string // "get" (GET /get/{slug}) or "hit" (POST /hit/{slug})
}

// The goals of the pinned table, racelab's req/s over each peer's.
const (
	goalHey = 1.2
	goalWrk = 0.8
)

// clientBound is the share of its core a racelab run must keep busy for
// the table to be a measure of the client rather than of the server.
const clientBound = 0.9

// pinnedClients are measured in this order in every round, so that a
// drift of the machine's speed during a round touches each alike.
var pinnedClients = []string{"racelab", "hey", "wrk"}

// pinnedRuns prints the pinned table: o.pin.runs rounds of racelab, hey
// and wrk at C = o.pin.c for o.pin.d each, all posting to one slug of a
// `racelab serve --store o.pin.store` pinned to core 0, each client
// pinned to core 1, and racelab's ratios to hey and wrk per round against
// the goals. racelab reads and judges every answer as it always does (the
// load's verdict is read back at the end); hey and wrk discard theirs.
func pinnedRuns(ctx context.Context, o options, dir string, w io.Writer) error {
	p := o.pin
	if _, err := exec.LookPath("taskset"); err != nil || numCPU() < 2 {
		fmt.Fprintln(w, "pinned: skipped, it needs taskset and 2 cores (the server on one, the client on the other)")
		return nil
	}
	base, stop, err := startServer(ctx, o.racelab, p.store, "0")
	if err != nil {
		return err
	}
	defer stop()
	c, secs := strconv.Itoa(p.c), strconv.Itoa(int(p.d.Seconds()))
	commands := map[string][]string{
		"racelab": {o.racelab, "load", "ten-hits-one-view", "-t", base, "-c", c, "--duration", p.d.String(), "-o", "json", "-q", "--keys", "1"},
		"hey":     {"hey", "-z", secs + "s", "-c", c},
		"wrk":     {"wrk", "-t", "1", "-c", c, "-d", secs + "s", "--latency"},
	}
	var what, url string
	switch p.call {
	case "get":
		// racelab reads and checks each answer as the story's read (200,
		// the slug echoed, a number of views); its verdict then says the
		// views were "lost", as nothing was hit, which is no matter here.
		what, url = "GET /get/{slug}", base+"/get/pinned-slug"
		commands["racelab"] = append(commands["racelab"], "--http-call", "hit=GET /get/{slug}")
		commands["hey"] = append(commands["hey"], url)
		commands["wrk"] = append(commands["wrk"], url)
	case "hit":
		what, url = "POST /hit/{slug}", base+"/hit/pinned-slug"
		script := filepath.Join(dir, "post.lua")
		if err := os.WriteFile(script, []byte("wrk.method = \"POST\"\n"), 0o644); err != nil {
			return err
		}
		commands["hey"] = append(commands["hey"], "-m", "POST", url)
		commands["wrk"] = append(commands["wrk"], "-s", script, url)
	default:
		return fmt.Errorf("-pin-call %q: want get or hit", p.call)
	}
	fmt.Fprintf(w, "pinned, client-bound: racelab serve --store %s on core 0 at %s; each client on core 1 (taskset -c 1), C=%d, %s a run, %s of one slug\n",
		p.store, base, p.c, p.d, what)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tload avg\tclient\treq/s\tclient CPU\tbusy\treq/CPU-s\tp50\tp99\t")
	bound := true                    // every racelab run kept its core busy: the client bound it
	ratios := map[string][]float64{} // racelab's req/s over each peer's, by round
	perCPU := map[string][]float64{} // the same for req/CPU-s
	for round := 1; round <= p.runs; round++ {
		got := map[string]measured{}
		for _, client := range pinnedClients {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			load := loadavg.One()
			args := commands[client]
			if _, err := exec.LookPath(args[0]); err != nil && client != "racelab" {
				fmt.Fprintf(tw, "%d\t%s\t%s\tnot installed (apt-get install -y hey wrk)\t\t\t\t\t\n", round, load, client)
				continue
			}
			m, err := measure(exec.CommandContext(ctx, "taskset", append([]string{"-c", "1"}, args...)...), client)
			if err == nil && m.note != "" {
				err = fmt.Errorf("%s", m.note)
			}
			if err != nil {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\t\t\t\t\n", round, load, client, err)
				continue
			}
			got[client] = m
			busy := m.cpu.Seconds() / p.d.Seconds()
			if client == "racelab" && busy < clientBound {
				bound = false
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%.2fs\t%.0f%%\t%.0f\t%s\t%s\t\n", round, load, client, m.rps, m.cpu.Seconds(), busy*100,
				m.rps*p.d.Seconds()/m.cpu.Seconds(), round2(m.p50), round2(m.p99))
		}
		for _, peer := range pinnedClients[1:] {
			if r, q := got["racelab"], got[peer]; r.rps > 0 && q.rps > 0 {
				ratios[peer] = append(ratios[peer], r.rps/q.rps)
				perCPU[peer] = append(perCPU[peer], (r.rps/r.cpu.Seconds())/(q.rps/q.cpu.Seconds()))
			}
		}
	}
	tw.Flush()
	for _, peer := range []struct {
		name string
		goal float64
	}{{"hey", goalHey}, {"wrk", goalWrk}} {
		rs := ratios[peer.name]
		if len(rs) == 0 {
			continue
		}
		each := func(rs []float64) string {
			var s []string
			for _, r := range rs {
				s = append(s, fmt.Sprintf("%.2f×", r))
			}
			return strings.Join(s, ", ")
		}
		med := median(rs)
		verdict := "met"
		switch {
		case !bound:
			verdict = "not judged: racelab did not keep its core busy, so the server or the machine bounded these runs, not the client"
		case med < peer.goal:
			verdict = "missed"
		}
		fmt.Fprintf(w, "racelab / %s req/s: %s by round, median %.2f× (goal ≥ %.1f×: %s)\n", peer.name, each(rs), med, peer.goal, verdict)
		fmt.Fprintf(w, "racelab / %s req/CPU-s: %s by round, median %.2f×\n", peer.name, each(perCPU[peer.name]), median(perCPU[peer.name]))
	}
	fmt.Fprintln(w, "busy is a client's CPU time over the run's length: a client-bound run keeps its core near 100%;")
	fmt.Fprintln(w, "req/CPU-s is its answers per second of its own CPU, what it spends a request, steadier than req/s on a shared machine")
	fmt.Fprintln(w)
	return nil
}

func round2(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return round(d)
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
