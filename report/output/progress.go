package output

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/clock"
)

// TrialBar draws one bar over every trial of a run on stderr.
type TrialBar struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

// NewTrialBar draws a bar of total trials, labelled name.
func NewTrialBar(ctx context.Context, w io.Writer, name string, total int) *TrialBar {
	pr := mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(40))
	bar := pr.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(name+" ", decor.WC{C: decor.DindentRight}), decor.CountersNoUnit("%d/%d trials")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)),
		mpb.BarRemoveOnComplete(),
	)
	return &TrialBar{p: pr, bar: bar}
}

// Trial advances the bar by one finished trial.
func (g *TrialBar) Trial(string, int, int) { g.bar.Increment() }

// Wait ends the bar, complete or not, and lets mpb flush before the report
// is printed below it.
func (g *TrialBar) Wait() {
	g.bar.Abort(true)
	g.p.Wait()
}

// WatchLoad draws one load's bar on stderr until the returned function is
// called: elapsed of total (time, or requests when the load is a count),
// the answers in the last second, the p99 so far and the errors. It polls
// now five times a second rather than being told of every answer, so a
// load of 100,000 requests a second costs the bar nothing.
func WatchLoad(ctx context.Context, w io.Writer, name string, now func() load.LoadProgress) func() {
	first := now()
	byCount := first.Requests > 0
	total := int64(first.Total / time.Millisecond)
	if byCount {
		total = first.Requests
	}
	pr := mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(30))
	// The words either side of the bar are laid out together, in the
	// first decorator mpb asks (it is given the whole line's width), so
	// that they leave the bar its room (fitProgress); the second says
	// what the first left it.
	var right string
	left := decor.Any(func(s decor.Statistics) string {
		p := now()
		counter := fmt.Sprintf("%s/%s", time.Duration(s.Current)*time.Millisecond/time.Second*time.Second, time.Duration(s.Total)*time.Millisecond)
		if byCount {
			counter = fmt.Sprintf("%d/%d requests", s.Current, s.Total)
		}
		var l string
		l, right = fitProgress(s.AvailableWidth, name, counter,
			fmt.Sprintf("%d/s", p.LastSecond), fmt.Sprintf("errors %d", p.Errors), fmt.Sprintf("p99 %s", results.Round(p.P99)))
		return l
	})
	bar := pr.AddBar(max(total, 1),
		mpb.PrependDecorators(left),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return right })),
		mpb.BarRemoveOnComplete(),
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		clock.Every(200*time.Millisecond, stop, func() {
			p := now()
			cur := int64(p.Elapsed / time.Millisecond)
			if byCount {
				cur = p.Sent
			}
			bar.SetCurrent(min(cur, total))
		})
	}()
	return func() {
		close(stop)
		<-done
		bar.Abort(true)
		pr.Wait()
	}
}

// minBar is the fewest cells a progress bar keeps, brackets included:
// fewer, and mpb draws "[--]", which says nothing.
const minBar = 20

// fitProgress lays out a load's progress line in width columns around a
// bar of at least minBar cells: the name and the counter on the left, the
// status parts on the right, most needed first. Past the width, the last
// status parts go first, then the name is cut short with an ellipsis;
// the counter and the first status part always stay. A width of 0 (not
// known) keeps everything.
func fitProgress(width int, name, counter string, status ...string) (left, right string) {
	room := width - minBar - 2 // a space either side of the bar
	long := func(l, r string) bool { return width > 0 && utf8.RuneCountInString(l)+utf8.RuneCountInString(r) > room }
	right = strings.Join(status, "  ")
	for n := len(status) - 1; n > 0 && long(name+" "+counter, right); n-- {
		right = strings.Join(status[:n], "  ")
	}
	left = name + " " + counter
	if over := utf8.RuneCountInString(left) + utf8.RuneCountInString(right) - room; width > 0 && over > 0 {
		keep := max(1, utf8.RuneCountInString(name)-over-1)
		left = string([]rune(name)[:keep]) + "… " + counter
	}
	return left, right
}
