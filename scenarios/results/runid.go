package results

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrReplayed is wrapped by the error of saved documents that hold the
// same evidence twice: one run given twice (in two files, or repeated in
// one), or the same trials under two runs. Merged, each copy would count
// its trials again and narrow the bound on the rate of breaking as if
// they had been run again; so they are refused, not merged.
var ErrReplayed = errors.New("the same evidence twice")

// NewRunID is the id of one run or load: 128 random bits in hex, so that
// two runs never share one, even with the same seed. It is written into
// the result (covered by its signature), and Distinct refuses results
// that share one.
func NewRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand's documented promise)
	return hex.EncodeToString(b[:])
}

// ReplayID is the run id of a run that is a replay of its seed (every
// store simulated in virtual time): the hash of the result without its
// id, so that the same seed still writes the same bytes, and two runs
// share an id exactly when they are the same evidence.
func ReplayID(r *Result) string {
	c := *r
	c.RunID = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return NewRunID() // a result always encodes; a fresh id is still unique
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// runIDs are a document's run ids: its own and, for a merged one, those
// of the runs merged into it.
func runIDs(own string, merged []string) []string {
	if own == "" {
		return merged
	}
	return append([]string{own}, merged...)
}

// mergedIDs are the run ids a merge of documents whose ids are parts
// records: every id once, in order.
func mergedIDs(parts ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, ids := range parts {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// Distinct refuses saved results that hold the same evidence twice: a run
// id met twice (a result given twice, repeated in one file, or merged
// into a result given beside it), or a target's trial key met twice (the
// same trials under two run ids: two runs of one seed in virtual time
// replay the same trials, and results saved before run ids were recorded
// are told apart by their keys alone). Every kept trial has a fresh key,
// so honest runs never share one.
func Distinct(rs []*Result, ls []*LoadResult) error {
	seen := map[string]bool{}
	id := func(ids []string) error {
		for _, id := range ids {
			if seen[id] {
				return fmt.Errorf("%w: run %s is given twice; each run's trials count once (give each result once)", ErrReplayed, id)
			}
			seen[id] = true
		}
		return nil
	}
	type trialKey struct {
		scenario    string
		n           int
		target, key string
	}
	keys := map[trialKey]bool{}
	for _, r := range rs {
		if err := id(runIDs(r.RunID, r.RunIDs)); err != nil {
			return err
		}
		for i := range r.Targets {
			t := &r.Targets[i]
			for _, tr := range t.Trials {
				if tr.Key == "" {
					continue // a scripted trial has no key of its own
				}
				k := trialKey{r.Scenario, r.Requests, t.Spec, tr.Key}
				if keys[k] {
					return fmt.Errorf("%w: target %s: trial key %s is given twice; the same trials count once (a result repeated, or runs replaying one seed in virtual time)",
						ErrReplayed, t.Label(), tr.Key)
				}
				keys[k] = true
			}
		}
	}
	for _, l := range ls {
		if err := id(runIDs(l.RunID, l.RunIDs)); err != nil {
			return err
		}
	}
	return nil
}
