package shards

import (
	"testing"
	"time"
)

// The staging lead grows to twice a slow staging, never shrinks, and
// stops at maxStageLead.
func TestNextLead(t *testing.T) {
	for _, tt := range []struct{ lead, took, want time.Duration }{
		{stageLead, 100 * time.Millisecond, stageLead},
		{stageLead, stageLead / 2, stageLead},
		{stageLead, stageLead/2 + time.Millisecond, stageLead + 2*time.Millisecond},
		{stageLead, 700 * time.Millisecond, 1400 * time.Millisecond},
		{1400 * time.Millisecond, 10 * time.Millisecond, 1400 * time.Millisecond},
		{stageLead, maxStageLead / 2, maxStageLead},
		{stageLead, time.Minute, maxStageLead},
	} {
		if got := nextLead(tt.lead, tt.took); got != tt.want {
			t.Errorf("nextLead(%s, staging took %s) = %s; want %s", tt.lead, tt.took, got, tt.want)
		}
	}
}
