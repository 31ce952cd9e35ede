package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/racelab/racelab/scenarios/results"
)

// The latency histogram's range and precision. Values are recorded in
// microseconds: from 1 µs to an hour at three significant figures costs
// about 200 KB a target, whatever the number of requests. Anything slower
// than an hour is recorded as an hour.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histSigFigs = 3
	// secondSigFigs is the precision of each second's own histogram, kept
	// only until the second is over: two figures are plenty for a line on
	// a chart, and cost a tenth.
	secondSigFigs = 2
)

// The kinds of failure a load tells apart (results.ErrorCount.Kind).
// Status codes are their own kind each ("status 503").
const (
	KindTimeout  = "timeout"
	KindRefused  = "refused"
	KindReset    = "reset"
	KindContract = "outside the contract"
	KindDropped  = "not sent in time"
	KindOther    = "other"
	// KindFiles is racelab's own machine out of file descriptors (EMFILE,
	// ENFILE): the load outgrew ulimit -n, not a failure of the target.
	KindFiles = "too many open files"
	// KindClosed is a connection closed cleanly before any answer (EOF),
	// KindCut an answer that stopped short of its length (an unexpected
	// EOF): neither is a reset, which the peer sends on purpose.
	KindClosed = "closed without an answer"
	KindCut    = "answer cut short"
)

// NewHistogram is an empty latency histogram of a whole load.
func NewHistogram() *hdrhistogram.Histogram { return newHistogram(histSigFigs) }

func newHistogram(sigfigs int) *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, sigfigs)
}

// micros is a latency as the histograms record it, within their range.
func micros(d time.Duration) int64 {
	return min(max(int64(d/time.Microsecond), histLowest), histHighest)
}

// latencyOf reads the percentiles off a histogram of microseconds.
func latencyOf(h *hdrhistogram.Histogram) results.Latency {
	if h.TotalCount() == 0 {
		return results.Latency{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return results.Latency{
		Count: h.TotalCount(),
		Min:   us(h.Min()),
		Mean:  time.Duration(h.Mean() * float64(time.Microsecond)),
		P50:   us(h.ValueAtQuantile(50)),
		P90:   us(h.ValueAtQuantile(90)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		Max:   us(h.Max()),
	}
}

// Summarize is what a load result records of a histogram: its latencies,
// the histogram itself in HdrHistogram's compressed, base64 form (which
// other HdrHistogram tools read too, so that saved results merge exactly
// rather than by averaging percentiles), and its bars.
func Summarize(h *hdrhistogram.Histogram) (lat results.Latency, saved string, bars []results.Bucket) {
	if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		saved = string(b) // only a histogram too large to compress fails; ours are bounded
	}
	return latencyOf(h), saved, buckets(h)
}

// errMalformedHistogram is a saved histogram the decoder could not read.
var errMalformedHistogram = errors.New("latency histogram: malformed; want the base64 HdrHistogram (V2 compressed) a racelab load saved")

// DecodeHistogram reads a histogram a load result saved (Summarize). A
// saved document is the reader's input: the decoder trusts the lengths in
// its header and panics on some malformed ones (a header shorter than 8
// bytes, a negative length), and a Go runtime error's text says nothing
// to the user, so both say what was wanted instead.
func DecodeHistogram(s string) (h *hdrhistogram.Histogram, err error) {
	if s == "" {
		return NewHistogram(), nil
	}
	defer func() {
		if recover() != nil {
			h, err = nil, errMalformedHistogram
		}
	}()
	if h, err = hdrhistogram.Decode([]byte(s)); err != nil {
		return nil, fmt.Errorf("%w (%w)", errMalformedHistogram, err)
	}
	return h, nil
}

// buckets folds a histogram into bars whose bounds double from 1 µs: a
// few dozen at most, enough to draw.
func buckets(h *hdrhistogram.Histogram) []results.Bucket {
	var out []results.Bucket
	if h.TotalCount() == 0 {
		return nil
	}
	upTo := int64(1)
	var cur int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		for b.To > upTo {
			if cur > 0 || len(out) > 0 {
				out = append(out, results.Bucket{UpTo: time.Duration(upTo) * time.Microsecond, Count: cur})
			}
			cur = 0
			upTo *= 2
		}
		cur += b.Count
	}
	return append(out, results.Bucket{UpTo: time.Duration(upTo) * time.Microsecond, Count: cur})
}

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
		return KindContract
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return KindFiles
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return KindReset
	case errors.Is(err, io.ErrUnexpectedEOF):
		return KindCut
	case errors.Is(err, io.EOF):
		return KindClosed
	}
	return KindOther
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
	statuses map[int]int64 // answers by HTTP status; nil for a store that is not a service
	answered int64
	errors   int64

	// samples keeps at most max requests one by one, a uniform sample of
	// the seen so far (reservoir sampling), drawn by rng.
	samples []results.LoadSample
	max     int
	seen    int64
	rng     *rand.Rand
}

func newMeter(start time.Time) *meter {
	return &meter{start: start, all: NewHistogram(), sec: newHistogram(secondSigFigs), kinds: map[string]*results.ErrorCount{}}
}

// Add sums one request that ended at ended into the meter, as Tally.Add
// sums a trial: its latency (s.Latency) when answered, its failure err by
// kind (s.Error) otherwise, and the HTTP status it was answered (s.Status:
// 0 for none, or a store that is not a service); and offers it to the
// sample. A failed request's latency is not a latency: it is counted by
// kind instead, so that timeouts do not pass for slow answers.
func (m *meter) Add(s results.LoadSample, ended time.Time, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keep(s)
	if s.Status != 0 {
		if m.statuses == nil {
			m.statuses = map[int]int64{}
		}
		m.statuses[s.Status]++
	}
	m.roll(int(ended.Sub(m.start) / time.Second))
	if err != nil {
		m.errors++
		m.cur.Errors++
		k := m.kinds[s.Error]
		if k == nil {
			k = &results.ErrorCount{Kind: s.Error, First: err.Error()}
			m.kinds[s.Error] = k
		}
		k.Count++
		return
	}
	m.answered++
	m.cur.Answered++
	v := micros(s.Latency)
	_ = m.all.RecordValue(v) // v is within the histogram's range by micros
	_ = m.sec.RecordValue(v)
}

// keep offers one request to the sample: every one is kept until max,
// and after that each with the same chance, so that a sample of a long
// load spreads over all of it rather than its first seconds.
func (m *meter) keep(s results.LoadSample) {
	if m.max <= 0 {
		return
	}
	m.seen++
	switch {
	case len(m.samples) < m.max:
		m.samples = append(m.samples, s)
	default:
		if j := m.rng.Int64N(m.seen); j < int64(m.max) {
			m.samples[j] = s
		}
	}
}

// sampled is the sample in the order the requests were due.
func (m *meter) sampled() []results.LoadSample {
	m.mu.Lock()
	defer m.mu.Unlock()
	slices.SortStableFunc(m.samples, func(a, b results.LoadSample) int { return cmp.Compare(a.At, b.At) })
	return m.samples
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
		l := latencyOf(m.sec)
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
	lat, hist, buckets = Summarize(m.all)
	return lat, hist, buckets, m.series, kinds
}
