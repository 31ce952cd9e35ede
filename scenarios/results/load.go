package results

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/internal/usage"
)

// KeyCount is what one key's requests were told in one shard of a load.
type KeyCount struct {
	// Key numbers the key among the load's --keys, from 0.
	Key     int   `json:"key"`
	Allowed int64 `json:"allowed"`
	Refused int64 `json:"refused"`
	Errors  int64 `json:"errors"`
}

// LateAfter is how far behind its intended instant an arrival may be
// sent before it counts as late.
const LateAfter = 10 * time.Millisecond

// LoadModel is how a load sends: arrivals on a schedule ("open"), or
// workers that send again as soon as they are answered ("closed"); the
// load package names them.
type LoadModel string

// KeyDist is how a load picks the key of each request.
type KeyDist struct {
	// Zipf's exponent; 0 means uniform. Above 1: the larger, the hotter
	// the first keys (rand.Zipf's s).
	Zipf float64
}

// ParseKeyDist reads "uniform" or "zipf:S" with S above 1.
func ParseKeyDist(s string) (KeyDist, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" || s == "uniform" {
		return KeyDist{}, nil
	}
	if rest, ok := strings.CutPrefix(s, "zipf:"); ok {
		v, err := strconv.ParseFloat(rest, 64)
		if err == nil && v > 1 && !math.IsInf(v, 0) {
			return KeyDist{Zipf: v}, nil
		}
	}
	return KeyDist{}, usage.Fieldf("KeyDist", "{} %q: want uniform or zipf:S with S above 1 (zipf:1.1 is mildly hot, zipf:2 very)", s)
}

func (d KeyDist) String() string {
	if d.Zipf == 0 {
		return "uniform"
	}
	return "zipf:" + strconv.FormatFloat(d.Zipf, 'g', -1, 64)
}
