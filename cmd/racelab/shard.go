package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/racelab/racelab/internal/sign"
	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
)

// shardFlags are run's and load's flags for playing one shard of a run
// spread over several processes or machines (a Kubernetes Indexed Job, a
// CI matrix): which shard, the run they share, and when to release.
type shardFlags struct {
	Shard   string
	RunID   string
	StartAt string
	Wait    bool
	Period  time.Duration
	Dir     string
	Sign    signFlags // --sign-key, on run and load alike (sign.go)

	set *pflag.FlagSet
	// now and env are the clock and environment; nil means the real ones.
	now func() time.Time
	env func(string) string
}

// shardFlagNames are the flags that need --shard.
var shardFlagNames = []string{"run-id", "start-at", "wait", "period", "shard-dir"}

func (f *shardFlags) register(fs *pflag.FlagSet, trials bool) {
	f.set = fs
	fs.StringVar(&f.Shard, "shard", "", "play one shard of a run spread over N processes: I/N (I from 0), or auto/N with I from\n"+
		"JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); writes the shard's part as JSON for 'racelab verify'")
	fs.StringVar(&f.RunID, "run-id", "", "with --shard: the run's id, the same on every shard, so that all shards hit the same keys")
	fs.StringVar(&f.StartAt, "start-at", "", "with --shard: release at this wall-clock instant, RFC 3339 (2026-05-01T12:00:00Z) or +30s;\n"+
		"compute it once and give every shard the same; not in the past, and more than a day ahead only with --wait")
	fs.BoolVar(&f.Wait, "wait", false, "with --start-at more than a day ahead: wait for it (without, such a date is taken for a typo)")
	if trials {
		fs.DurationVar(&f.Period, "period", engine.DefaultPeriod, "with --shard and --start-at: time between two trials' releases")
	}
	fs.StringVar(&f.Dir, "shard-dir", "", "with --shard: write the part to DIR/shard-I-of-N.json instead of standard output")
	f.Sign.register(fs, false)
}

// on says whether this process plays a shard.
func (f *shardFlags) on() bool { return f.Shard != "" }

// check refuses the shard flags without --shard, where they would do
// nothing.
func (f *shardFlags) check() error {
	if f.on() || f.set == nil {
		return nil
	}
	for _, name := range shardFlagNames {
		if fl := f.set.Lookup(name); fl != nil && f.set.Changed(name) {
			return usageError{fmt.Errorf("--%s needs --shard I/N: it only means something for one shard of a sharded run", name)}
		}
	}
	return nil
}

// sharding reads the flags into the shard this process plays.
func (f *shardFlags) sharding() (engine.Sharding, error) {
	now, env := time.Now, os.Getenv
	if f.now != nil {
		now = f.now
	}
	if f.env != nil {
		env = f.env
	}
	spec := shards.Spec{Shard: f.Shard, RunID: f.RunID, StartAt: f.StartAt, Wait: f.Wait, Period: f.Period,
		Trials: f.set != nil && f.set.Lookup("period") != nil}
	return spec.Sharding(now(), env)
}

// write writes a shard's part: to standard output, or to its file in
// --shard-dir.
func (f *shardFlags) write(s Streams, part *results.ShardResult) error {
	data, err := shards.Encode(part, sign.Key(f.Sign.Key, f.Sign.env))
	if err != nil {
		return err
	}
	if f.Dir == "" {
		_, err := s.Out.Write(data)
		return err
	}
	if err := shards.Save(f.Dir, part, data); err != nil {
		return fmt.Errorf("--shard-dir: %w", err)
	}
	return nil
}

// notice says on a terminal what a shard is about to do.
func (f *shardFlags) notice(s Streams, quiet bool, sh engine.Sharding, what string) {
	if quiet || !s.ErrIsTTY {
		return
	}
	when := "as soon as it is ready"
	if !sh.StartAt.IsZero() {
		when = "at " + sh.StartAt.Format(time.RFC3339Nano)
	}
	fmt.Fprintf(s.Err, "racelab: shard %d of %d of run %s: %s, released %s; merge the parts with racelab verify\n", sh.Index, sh.Of, sh.RunID, what, when)
}

// runShard plays one shard of `racelab run` and writes its part.
func runShard(c *cobra.Command, s Streams, o *runOptions, p engine.Plan) error {
	switch {
	case !onlyJSON(o.Outputs):
		return usageError{errors.New("-o: a shard writes its part as JSON to standard output (or --shard-dir), for racelab verify to merge and render in any format")}
	case o.Timeline || o.Evidence.HistoryHTML != "":
		return usageError{errors.New("--timeline and --history-html draw judged trials; give them to racelab verify, which judges the merged run")}
	}
	if part, err := o.part(p); err != nil {
		return err
	} else if part != nil {
		return usageError{fmt.Errorf("--%s plays in virtual time inside one process; it cannot be sharded", part.Flag)}
	}
	sh, err := o.Shard.sharding()
	if err != nil {
		return err
	}
	n := cmp.Or(p.Requests, p.Scenario.DefaultRequests)
	lo, hi := sh.Span(n)
	o.Shard.notice(s, o.Quiet, sh, fmt.Sprintf("requests %d to %d of each burst of %d", lo, hi-1, n))
	part, err := shards.RunShard(c.Context(), p, sh)
	if err != nil {
		return err
	}
	return o.Shard.finish(s, part)
}

// loadShard plays one shard of `racelab load` and writes its part.
func loadShard(c *cobra.Command, s Streams, o *loadOptions, p load.LoadPlan) error {
	if !onlyJSON(o.Outputs) {
		return usageError{errors.New("-o: a shard writes its part as JSON to standard output (or --shard-dir), for racelab verify to merge and render in any format")}
	}
	sh, err := o.Shard.sharding()
	if err != nil {
		return err
	}
	o.Shard.notice(s, o.Quiet, sh, "its share of the load")
	part, err := shards.LoadShard(c.Context(), p, sh)
	if err != nil {
		return err
	}
	return o.Shard.finish(s, part)
}

// onlyJSON reports whether -o asks for nothing but what a shard writes:
// JSON on standard output, or no -o at all.
func onlyJSON(o outputFlags) bool {
	outs, err := o.parse()
	return len(o.raw) == 0 || err == nil && len(outs) == 1 && outs[0].Format == string(report.JSON) && outs[0].Path == ""
}

// finish writes a shard's part, then exits as the shard went: interrupted,
// a target it could not play, or done.
func (f *shardFlags) finish(s Streams, part *results.ShardResult) error {
	if err := f.write(s, part); err != nil {
		return err
	}
	interrupted, failed := part.Outcome()
	switch {
	case interrupted:
		return verdictError{exitInterrupted, "interrupted: the shard's part is partial"}
	case failed != "":
		return verdictError{exitFailure, fmt.Sprintf("could not run shard %d: %s", part.Shard, failed)}
	}
	return nil
}
