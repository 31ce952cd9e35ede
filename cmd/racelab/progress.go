package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress draws one bar over every trial of a run on stderr. It is the
// only user of mpb, so an API change there stays in this file.
type progress struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

// newProgress draws a bar of total trials, labelled name.
func newProgress(ctx context.Context, w io.Writer, name string, total int) *progress {
	pr := mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(40))
	bar := pr.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(name+" ", decor.WC{C: decor.DindentRight}), decor.CountersNoUnit("%d/%d trials")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)),
		mpb.BarRemoveOnComplete(),
	)
	return &progress{p: pr, bar: bar}
}

// Trial advances the bar by one finished trial.
func (g *progress) Trial(string, int, int) { g.bar.Increment() }

// Wait ends the bar, complete or not, and lets mpb flush before the report
// is printed below it.
func (g *progress) Wait() {
	g.bar.Abort(true)
	g.p.Wait()
}

// watchLoad draws one load's bar on stderr until the returned function is
// called: elapsed of total (time, or requests when the load is a count),
// the answers in the last second, the p99 so far and the errors. It polls
// now five times a second rather than being told of every answer, so a
// load of 100,000 requests a second costs the bar nothing.
func watchLoad(ctx context.Context, w io.Writer, name string, now func() load.LoadProgress) func() {
	first := now()
	byCount := first.Requests > 0
	total := int64(first.Total / time.Millisecond)
	if byCount {
		total = first.Requests
	}
	pr := mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(30))
	status := func(decor.Statistics) string {
		p := now()
		return fmt.Sprintf("%d/s  p99 %s  errors %d", p.LastSecond, results.Round(p.P99), p.Errors)
	}
	counter := decor.Any(func(s decor.Statistics) string {
		if byCount {
			return fmt.Sprintf("%d/%d requests", s.Current, s.Total)
		}
		return fmt.Sprintf("%s/%s", time.Duration(s.Current)*time.Millisecond/time.Second*time.Second, time.Duration(s.Total)*time.Millisecond)
	})
	bar := pr.AddBar(max(total, 1),
		mpb.PrependDecorators(decor.Name(name+" ", decor.WC{C: decor.DindentRight}), counter),
		mpb.AppendDecorators(decor.Any(status)),
		mpb.BarRemoveOnComplete(),
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				p := now()
				cur := int64(p.Elapsed / time.Millisecond)
				if byCount {
					cur = p.Sent
				}
				bar.SetCurrent(min(cur, total))
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		bar.Abort(true)
		pr.Wait()
	}
}
