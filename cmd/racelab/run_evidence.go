package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// evidenceFlags are run's flags for the strength of a verdict: the
// confidence of the bound on the rate of breaking, trials added until a
// bound is met, and the linearizability check of every trial's history.
type evidenceFlags struct {
	Confidence     percentage
	MaxRate        percentage
	MaxTrials      int
	CheckHistory   bool
	HistoryTimeout time.Duration
	HistoryHTML    string
	MaxSpread      time.Duration
	// flags is the set the flags live in, to tell an explicit value from
	// the default.
	flags *pflag.FlagSet
}

func (e *evidenceFlags) register(f *pflag.FlagSet) {
	e.Confidence = percentage(results.DefaultConfidence)
	e.flags = f
	f.Var(&e.Confidence, "confidence", "confidence level of the bound on the rate of breaking, such as 95% or 99%")
	f.Var(&e.MaxRate, "max-rate", "add trials until the rate of breaking is shown below this, such as 1%, or a trial breaks;\n"+
		"a target expected to hold then holds only if the bound is met")
	f.IntVar(&e.MaxTrials, "max-trials", results.DefaultMaxTrials, "most trials per target with --max-rate")
	f.BoolVar(&e.CheckHistory, "check-history", true, "check each trial's history for linearizability (porcupine); a history that is not breaks the trial")
	f.DurationVar(&e.HistoryTimeout, "history-timeout", results.DefaultHistoryTimeout, "time limit of one trial's history check; past it the check says unknown")
	f.StringVar(&e.HistoryHTML, "history-html", "", "write porcupine's picture of the first trial that is not linearizable (else the first trial) to `FILE`")
	addMaxSpread(f, &e.MaxSpread)
}

// addMaxSpread is --max-spread, one flag for run and verify: the widest
// release spread a burst may have and still prove anything.
func addMaxSpread(f *pflag.FlagSet, dst *time.Duration) {
	f.DurationVar(dst, "max-spread", engine.DefaultMaxSpread, "widest release spread of a burst that still proves anything; a trial spread wider is inconclusive\n"+
		"unless its counts prove a break (burst not simultaneous)")
}

func (e *evidenceFlags) apply(p *engine.Plan) error {
	changed := func(name string) bool { return e.flags != nil && e.flags.Changed(name) }
	// An explicit value that would mean "unset" is refused rather than
	// quietly replaced by the default; the rest is the plan's to check.
	err := explicitZero(changed, engine.Wants.Invalid, zeroIf("Confidence", e.Confidence.String(), e.Confidence == 0),
		zeroIf("MaxRate", e.MaxRate.String(), e.MaxRate == 0), zeroIf("MaxTrials", e.MaxTrials, e.MaxTrials == 0),
		zeroIf("HistoryTimeout", e.HistoryTimeout, e.HistoryTimeout == 0), zeroIf("MaxSpread", e.MaxSpread, e.MaxSpread == 0))
	if err != nil {
		return err
	}
	if changed("max-trials") && e.MaxRate == 0 {
		return usageError{errors.New("--max-trials needs --max-rate; without a rate to prove, --trials says how many trials run")}
	}
	if e.HistoryHTML != "" {
		// Refused before anything runs, not after an hour of trials.
		dir := filepath.Dir(e.HistoryHTML)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: --history-html %s: folder %s does not exist", results.ErrUsage, e.HistoryHTML, dir)
		}
	}
	p.Evidence = engine.Evidence{
		Confidence:     float64(e.Confidence),
		MaxRate:        float64(e.MaxRate),
		MaxTrials:      e.MaxTrials,
		SkipHistory:    !e.CheckHistory,
		HistoryTimeout: e.HistoryTimeout,
		MaxSpread:      e.MaxSpread,
	}
	if e.MaxRate > 0 {
		// The trials the bound needs are known in advance; planning them
		// lets the progress bar show the real total. Run would raise the
		// count to the same number by itself.
		p.Trials = max(p.Trials, results.TrialsNeeded(float64(e.Confidence), float64(e.MaxRate)))
	}
	return nil
}

// percentage is a flag value given as a percentage: "99%", "0.5%". The
// sign is required: a bare "0.5" could mean 0.5% or 50%, and "1" 1% or
// 100%, so a bare number is refused rather than guessed at.
type percentage float64

func (p *percentage) String() string {
	if *p == 0 {
		return "0"
	}
	// Rounded to a millionth of a percent: 0.95×100 is 94.99999999999999.
	return strconv.FormatFloat(math.Round(float64(*p)*1e8)/1e6, 'f', -1, 64) + "%"
}

func (p *percentage) Set(s string) error {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	num = strings.TrimSpace(num)
	f, err := strconv.ParseFloat(num, 64)
	if err == nil && pct {
		// Parsed with the exponent, 99.9% is the float nearest 0.999;
		// divided by 100 it would be 0.9990000000000001.
		f, err = strconv.ParseFloat(num+"e-2", 64)
	}
	switch {
	case err != nil:
		return errors.New("not a number")
	case !pct:
		return errors.New("ambiguous: write a percentage with %, such as 1%")
	}
	*p = percentage(f)
	return nil
}

// Type names the value in help and in errors: "want a percentage".
func (p *percentage) Type() string { return "percentage" }
