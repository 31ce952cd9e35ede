package results

import (
	"fmt"
)

// BatchCheck is what reading a target's keys in batches found: every key's
// total read in a batch must equal its single read after the burst. Seed
// 002's batch read decoded its slugs a second time and answered 0 for
// every Arabic post whose page counted it, with no error anywhere.
type BatchCheck struct {
	// Keys is how many keys were read both ways.
	Keys int `json:"keys"`
	// Mismatches are the keys whose batch total differs from their single
	// read.
	Mismatches []BatchMismatch `json:"mismatches,omitempty"`
	// Error is why a batch read failed; the check then proves nothing.
	Error string `json:"error,omitempty"`
}

// BatchMismatch is one key read two ways with two answers.
type BatchMismatch struct {
	Key    string `json:"key"`
	Single int64  `json:"single"`
	Batch  int64  `json:"batch"`
}

// Found reports whether the check found batch reads that disagree.
func (b *BatchCheck) Found() bool { return b != nil && len(b.Mismatches) > 0 }

// Why says in one line what the check found, for the table and the exit
// code.
func (b *BatchCheck) Why(label string) string {
	m := b.Mismatches
	same := true
	for _, x := range m[1:] {
		same = same && x.Single == m[0].Single && x.Batch == m[0].Batch
	}
	if same {
		return fmt.Sprintf("%s: batch read answered %d for %s that single reads count as %d: keys decoded twice?",
			label, m[0].Batch, Plural(int64(len(m)), "key"), m[0].Single)
	}
	return fmt.Sprintf("%s: batch read disagreed with single reads on %d of %s (first %q: batch %d, single %d): keys decoded twice?",
		label, len(m), Plural(int64(b.Keys), "key"), m[0].Key, m[0].Batch, m[0].Single)
}
