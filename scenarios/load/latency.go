package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/racelab/racelab/scenarios/results"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The latency histogram's range and precision. Values are recorded in
// microseconds: from 1 µs to an hour at three significant figures costs
// about 200 KB a target, whatever the number of requests. Anything slower
// than an hour is recorded as an hour.
const (

	// secondSigFigs is the precision of each second's own histogram, kept
	// only until the second is over: two figures are plenty for a line on
	// a chart, and cost a tenth.
	secondSigFigs = 2
)

// statusError is what an HTTP target's error is when it carries the
// status the service answered (httpapi.AnswerError). It is an interface
// here so that the engine names no target package.
type statusError interface {
	error
	// HTTPStatus is the status answered, and whether the contract knows it
	// (an answer with a known status and a wrong body is outside the
	// contract, an unknown status is a kind of its own).
	HTTPStatus() (code int, known bool)
}

// errorKind sorts a failed request's error into one of the kinds.
func errorKind(err error) string {
	var se statusError
	var ne net.Error
	switch {
	case errors.As(err, &se):
		if code, known := se.HTTPStatus(); !known {
			return fmt.Sprintf("status %d", code)
		}
		return results.ErrContract
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return results.ErrTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return results.ErrRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return results.ErrReset
	}
	return results.ErrOtherKind
}

// meter records every answer of one target's load: the whole latency
// histogram, the current second's, the seconds gone by, and the failures
// by kind. One mutex guards it all: recording is a few tens of
// nanoseconds, far below a request's own cost, and a single histogram
// keeps the percentiles exact rather than merged from shards.
type meter struct {
	mu       sync.Mutex
	start    time.Time
	all      *hdrhistogram.Histogram
	sec      *hdrhistogram.Histogram
	at       int // the second sec is filling
	cur      results.Second
	series   []results.Second
	kinds    map[string]*results.ErrorCount
	answered int64
	errors   int64
}

func newMeter(start time.Time) *meter {
	return &meter{start: start, all: results.NewHistogram(results.HistSigFigs), sec: results.NewHistogram(secondSigFigs), kinds: map[string]*results.ErrorCount{}}
}

// record counts one request that ended at now: its latency when answered,
// its error otherwise. A failed request's latency is not a latency: it is
// counted by kind instead, so that timeouts do not pass for slow answers.
func (m *meter) record(now time.Time, latency time.Duration, err error, kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll(int(now.Sub(m.start) / time.Second))
	if err != nil {
		m.errors++
		m.cur.Errors++
		k := m.kinds[kind]
		if k == nil {
			k = &results.ErrorCount{Kind: kind, First: err.Error()}
			m.kinds[kind] = k
		}
		k.Count++
		return
	}
	m.answered++
	m.cur.Answered++
	v := results.Micros(latency)
	_ = m.all.RecordValue(v) // v is within the histogram's range by micros
	_ = m.sec.RecordValue(v)
}

// roll closes the seconds before at, so that a second's histogram is
// freed as soon as it is over and memory does not grow with the load's
// length beyond one small Second each.
func (m *meter) roll(at int) {
	for m.at < at {
		m.closeSecond()
		m.at++
		m.cur = results.Second{At: m.at}
	}
}

func (m *meter) closeSecond() {
	s := m.cur
	s.At = m.at
	if m.sec.TotalCount() > 0 {
		l := results.LatencyOf(m.sec)
		s.P50, s.P99, s.Max = l.P50, l.P99, l.Max
	}
	m.series = append(m.series, s)
	m.sec.Reset()
}

// snapshot is the progress so far: answers, failures, the p99 over all of
// them, and the answers in the last whole second.
func (m *meter) snapshot() (answered, errs int64, p99 time.Duration, lastSecond int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.series); n > 0 {
		lastSecond = m.series[n-1].Answered
	}
	return m.answered, m.errors, time.Duration(m.all.ValueAtQuantile(99)) * time.Microsecond, lastSecond
}

// finish closes the last second and hands everything over.
func (m *meter) finish(end time.Time) (lat results.Latency, hist string, buckets []results.Bucket, series []results.Second, kinds []results.ErrorCount) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll(int(end.Sub(m.start) / time.Second))
	if m.cur.Answered+m.cur.Errors > 0 {
		m.closeSecond()
	}
	for _, k := range m.kinds {
		kinds = append(kinds, *k)
	}
	slices.SortFunc(kinds, func(a, b results.ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Kind, b.Kind))
	})
	return results.LatencyOf(m.all), results.EncodeHistogram(m.all), results.Buckets(m.all), m.series, kinds
}
