package main

import (
	"fmt"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/spf13/pflag"
)

// storyFlags are the stories' own settings of `racelab run` (--stock,
// --limit, --rate, …). Each belongs to the stories whose Knobs name it;
// given to another story it is a usage error.
type storyFlags struct {
	flags     *pflag.FlagSet
	Stock     int64
	Limit     int64
	Window    string
	Tolerance int64
	Rate      string
	Arrivals  string
	Rollover  bool
	Bound     string
	For       string
	Via       string
}

func (s *storyFlags) register(f *pflag.FlagSet) {
	s.flags = f
	f.Int64Var(&s.Stock, results.KnobStock, 0, "five-checkouts: copies of each item (default 1); the rule becomes successes <= stock")
	f.Int64Var(&s.Limit, results.KnobLimit, 0, "six-of-five: requests a caller per window (default 5)")
	f.StringVar(&s.Window, results.KnobWindow, "", "six-of-five: the fixed window (default 60s)")
	f.Int64Var(&s.Tolerance, results.KnobTolerance, 1, "six-of-five: how far over the limit the soft rule lets a window go")
	f.StringVar(&s.Rate, results.KnobRate, "", "six-of-five: stream one caller's requests at this rate over one window (such as 20/s) instead of a burst;\n"+
		"stale-plan: the rate of downloads after the cancel (default 6/m; 6/h via the extension)")
	f.StringVar(&s.Arrivals, results.KnobArrivals, "", "spacing of a stream's arrivals: even (default: one bot keeping time) or poisson (seeded)")
	f.BoolVar(&s.Rollover, results.KnobRollover, false, "six-of-five: start each stream half a window before a window boundary")
	f.StringVar(&s.Bound, results.KnobBound, "", "stale-plan: the exposure after a cancel the design accepts (default the plan's 45s cache;\n"+
		"12h0m45s via the extension)")
	f.StringVar(&s.For, results.KnobFor, "", "stale-plan: how long downloads keep coming after the cancel (default twice the bound, at least 2m)")
	f.StringVar(&s.Via, results.KnobVia, "", "stale-plan: who grants the downloads: server (default; a cached plan read) or extension\n"+
		"(a licence revalidated every 12h)")
}

// settings reads the flags that were given into results.Settings.
func (s *storyFlags) settings() (results.Settings, error) {
	var out results.Settings
	changed := func(name string) bool { return s.flags != nil && s.flags.Changed(name) }
	if changed(results.KnobStock) {
		if s.Stock < 1 || s.Stock > engine.MaxRequests {
			return out, usageError{fmt.Errorf("--stock %d: want 1 to %d copies", s.Stock, engine.MaxRequests)}
		}
		out.Stock = s.Stock
	}
	if changed(results.KnobLimit) {
		if s.Limit < 1 {
			return out, usageError{fmt.Errorf("--limit %d: want 1 or more requests a window", s.Limit)}
		}
		out.Limit = s.Limit
	}
	var err error
	if out.Window, err = positiveDuration(results.KnobWindow, s.Window, "60s"); err != nil {
		return out, err
	}
	if out.Bound, err = positiveDuration(results.KnobBound, s.Bound, "45s"); err != nil {
		return out, err
	}
	if out.For, err = positiveDuration(results.KnobFor, s.For, "3m"); err != nil {
		return out, err
	}
	switch s.Via {
	case "", results.ViaServer, results.ViaExtension:
		out.Via = s.Via
	default:
		return out, usageError{fmt.Errorf("--via %q: want %s or %s", s.Via, results.ViaServer, results.ViaExtension)}
	}
	if changed(results.KnobTolerance) {
		tol := s.Tolerance
		out.Tolerance = &tol
	}
	if s.Rate != "" {
		r, err := pace.ParseRate(s.Rate)
		if err != nil || r <= 0 {
			return out, usageError{fmt.Errorf("--rate %q: want a positive rate such as 20/s or 6/m", s.Rate)}
		}
		out.Rate = r
	}
	if s.Arrivals != "" {
		sp, err := pace.ParseSpacing(s.Arrivals)
		if err != nil {
			return out, usageError{fmt.Errorf("--%v", err)}
		}
		out.Arrivals = sp
	}
	out.Rollover = s.Rollover
	return out, nil
}

func positiveDuration(flag, v, example string) (d time.Duration, err error) {
	if v == "" {
		return 0, nil
	}
	d, perr := time.ParseDuration(v)
	if perr != nil || d <= 0 {
		return 0, usageError{fmt.Errorf("--%s %q: want a positive duration such as %s", flag, v, example)}
	}
	return d, nil
}
