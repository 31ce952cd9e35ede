package report

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// CSV is a load's figures as one table to plot, as vegeta's and k6's CSV
// outputs are: a row per second of each target, then a row per request
// the load kept (results.LoadTarget.Samples). One header serves both; the
// row column says which a row is, and leaves the other's cells empty, so
// that a spreadsheet or pandas filters on it.
//
// A run has no seconds and no requests in time to plot: asked of a run,
// csv is refused (errNoRunCSV).
var csvHeader = []string{"target", "row", "second", "at_ms", "key", "outcome", "status", "latency_ms", "error",
	"answered", "errors", "p50_ms", "p99_ms", "max_ms"}

// renderLoadCSV writes every load's targets under one header.
func renderLoadCSV(b *bytes.Buffer, rs []*results.LoadResult) error {
	w := csv.NewWriter(b)
	rows := [][]string{csvHeader}
	for _, r := range rs {
		labels := r.Labels()
		for i := range r.Targets {
			t := &r.Targets[i]
			for _, s := range t.Series {
				rows = append(rows, []string{labels[i], "second", strconv.Itoa(s.At), "", "", "", "", "", "",
					strconv.FormatInt(s.Answered, 10), strconv.FormatInt(s.Errors, 10), ms(s.P50), ms(s.P99), ms(s.Max)})
			}
			for _, s := range t.Samples {
				status, latency := "", ""
				if s.Status != 0 {
					status = strconv.Itoa(s.Status)
				}
				if s.Outcome != results.Errored {
					latency = ms(s.Latency)
				}
				rows = append(rows, []string{labels[i], "request", strconv.FormatInt(int64(s.At/time.Second), 10), ms(s.At),
					strconv.Itoa(s.Key), string(s.Outcome), status, latency, s.Error, "", "", "", "", ""})
			}
		}
	}
	return w.WriteAll(rows) // WriteAll flushes, and says the writer's error
}

// ms writes a duration in milliseconds to the microsecond, as a plotting
// tool reads a number.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

// errNoRunCSV is csv asked of a run. It is a usage error: the user asked
// for what does not exist.
type errNoRunCSV struct{}

func (errNoRunCSV) Error() string {
	return "csv is a load's seconds and requests, which a run has not; a run's every figure is in its json"
}

func (errNoRunCSV) Unwrap() error { return results.ErrUsage }
