package results

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func NewHistogram(sigfigs int) *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, sigfigs)
}

func Micros(d time.Duration) int64 {
	return min(max(int64(d/time.Microsecond), histLowest), histHighest)
}

// Latency is the spread of a target's answered requests' latencies.
type Latency struct {
	Count int64         `json:"count"`
	Min   time.Duration `json:"min_ns"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p99_9_ns"`
	Max   time.Duration `json:"max_ns"`
}

// LatencyOf reads the percentiles off a histogram of microseconds.
func LatencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return Latency{
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

// EncodeHistogram writes h in HdrHistogram's compressed, base64 form, which
// other HdrHistogram tools read too, so that saved results can be merged
// exactly rather than by averaging percentiles.
func EncodeHistogram(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "" // only a histogram too large to compress fails; ours are bounded
	}
	return string(b)
}

// DecodeHistogram reads a histogram saved by a load result.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return NewHistogram(HistSigFigs), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("latency histogram: %w", err)
	}
	return h, nil
}

// Bucket is one bar of a latency histogram: how many answers took up to
// UpTo (and more than the previous bucket's UpTo).
type Bucket struct {
	UpTo  time.Duration `json:"up_to_ns"`
	Count int64         `json:"count"`
}

// Buckets folds a histogram into bars whose bounds double from 1 µs: a
// few dozen at most, enough to draw.
func Buckets(h *hdrhistogram.Histogram) []Bucket {
	var out []Bucket
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
				out = append(out, Bucket{time.Duration(upTo) * time.Microsecond, cur})
			}
			cur = 0
			upTo *= 2
		}
		cur += b.Count
	}
	return append(out, Bucket{time.Duration(upTo) * time.Microsecond, cur})
}

// Second is one second of a load: what was answered in it (by the instant
// the answer came) and how fast.
type Second struct {
	// At counts seconds from the start of the load, from 0.
	At       int           `json:"at"`
	Answered int64         `json:"answered"`
	Errors   int64         `json:"errors"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Max      time.Duration `json:"max_ns"`
}

// ErrorCount is how many requests failed one way, and the first such
// failure in words.
type ErrorCount struct {
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
	First string `json:"first"`
}

// The kinds of failure a load tells apart. Status codes are their own
// kind each ("status 503").
const (
	ErrTimeout   = "timeout"
	ErrRefused   = "refused"
	ErrReset     = "reset"
	ErrContract  = "outside the contract"
	ErrDropped   = "not sent in time"
	ErrOtherKind = "other"
)

const histLowest = 1

const histHighest = int64(time.Hour / time.Microsecond)

const HistSigFigs = 3
