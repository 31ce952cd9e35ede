package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// Errors an injected fault answers with.
var (
	// ErrInjected is a failure drawn by the error rate.
	ErrInjected = errors.New("injected failure")
	// ErrOutage is a failure inside the outage window.
	ErrOutage = errors.New("outage")
)

// DefaultSpikeLatency is how long a latency spike adds when Config.Spike
// is set and Config.SpikeLatency is not.
const DefaultSpikeLatency = time.Second

// Window is a span of time measured from the start of a trial: [From, To).
type Window struct {
	From, To time.Duration
}

// IsZero says there is no window.
func (w Window) IsZero() bool { return w.From == 0 && w.To == 0 }

// String writes the window as ParseWindow reads it: "2m0s-5m0s".
func (w Window) String() string { return w.From.String() + "-" + w.To.String() }

// ParseWindow reads "FROM-TO" (two durations, such as 2m-5m): the outage
// starts FROM after the start of a trial and ends at TO.
func ParseWindow(s string) (Window, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return Window{}, fmt.Errorf("%q is not FROM-TO, such as 2m-5m", s)
	}
	from, err1 := time.ParseDuration(a)
	to, err2 := time.ParseDuration(b)
	switch {
	case err1 != nil || err2 != nil:
		return Window{}, fmt.Errorf("%q is not FROM-TO with two durations, such as 2m-5m", s)
	case from < 0 || to <= from:
		return Window{}, fmt.Errorf("%q ends before it starts; want FROM-TO with 0 <= FROM < TO, such as 2m-5m", s)
	}
	return Window{from, to}, nil
}

// Config says which faults to inject. The zero value injects none.
type Config struct {
	// Fail is the probability, from 0 to 1, that an operation fails.
	Fail float64
	// Outage fails every operation inside it, measured from the start
	// of the trial (Injector.StartTrial).
	Outage Window
	// Spike is the probability, from 0 to 1, that an operation takes
	// SpikeLatency longer.
	Spike        float64
	SpikeLatency time.Duration
	// Seed decides every draw.
	Seed int64
}

// Validate reports the first setting that cannot be honoured, named as a
// user types it.
func (c Config) Validate() error {
	switch {
	case !(c.Fail >= 0 && c.Fail <= 1):
		return fmt.Errorf("fail is %v; want a probability from 0 to 1", c.Fail)
	case !(c.Spike >= 0 && c.Spike <= 1):
		return fmt.Errorf("spike is %v; want a probability from 0 to 1", c.Spike)
	case c.SpikeLatency < 0:
		return fmt.Errorf("spike-latency is %v; want 0 or more", c.SpikeLatency)
	}
	return nil
}

// Active says whether c injects anything.
func (c Config) Active() bool { return c.Fail > 0 || !c.Outage.IsZero() || c.Spike > 0 }

// Clock is what an Injector reads the time from and waits spikes on.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// Injector injects c's faults into one store. A nil *Injector injects none,
// so a store can call it unconditionally. It is safe for concurrent use.
type Injector struct {
	cfg   Config
	clock Clock

	mu    sync.Mutex
	rng   *rand.Rand
	start time.Time
	stats Stats
}

// Stats counts the faults injected so far.
type Stats struct {
	Failed, Outage, Spiked int64
}

// New returns an injector of cfg's faults on clock, or nil when cfg injects
// none.
func New(cfg Config, clock Clock) *Injector {
	if !cfg.Active() {
		return nil
	}
	if cfg.Spike > 0 && cfg.SpikeLatency == 0 {
		cfg.SpikeLatency = DefaultSpikeLatency
	}
	// A stream of its own, apart from the store's: adding faults changes
	// no draw the store makes for itself.
	return &Injector{cfg: cfg, clock: clock, start: clock.Now(),
		rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0xbb67ae8584caa73b))}
}

// StartTrial marks now as the start of a trial, from which the outage
// window is measured.
func (in *Injector) StartTrial() {
	if in == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.start = in.clock.Now()
}

// Before is called by the store before each operation of a request. It
// waits out a spike, if one is drawn, and answers the failure the
// operation meets: ErrOutage inside the window, ErrInjected when the error
// rate says so, nil otherwise. op names the operation in the error.
func (in *Injector) Before(ctx context.Context, op string) error {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	// Every draw in one critical section, a fixed number per operation,
	// so that the stream stays in step whatever the outcome.
	spike := in.cfg.Spike > 0 && in.rng.Float64() < in.cfg.Spike
	fail := in.cfg.Fail > 0 && in.rng.Float64() < in.cfg.Fail
	in.mu.Unlock()
	if spike {
		if err := in.clock.Sleep(ctx, in.cfg.SpikeLatency); err != nil {
			return err
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	since := in.clock.Now().Sub(in.start)
	switch {
	case !in.cfg.Outage.IsZero() && since >= in.cfg.Outage.From && since < in.cfg.Outage.To:
		in.stats.Outage++
		return fmt.Errorf("%s at %v into the trial: %w (%v)", op, since, ErrOutage, in.cfg.Outage)
	case fail:
		in.stats.Failed++
		return fmt.Errorf("%s: %w", op, ErrInjected)
	}
	if spike {
		in.stats.Spiked++
	}
	return nil
}

// Stats returns the faults injected so far.
func (in *Injector) Stats() Stats {
	if in == nil {
		return Stats{}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stats
}
