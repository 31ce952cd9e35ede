package main

import (
	"context"
	"io"

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
