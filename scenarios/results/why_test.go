package results

import (
	"strings"
	"testing"
)

// InconclusiveWhy says the first cause of no verdict, in the order a user
// would fix them, and never names a command-line flag: results lies below
// the command line.
func TestInconclusiveWhy(t *testing.T) {
	tests := []struct {
		s    Tally
		want string
	}{
		{Tally{Trials: 10, Inconclusive: 4, HistoryUnknown: 4}, "kv: inconclusive: 4 of 10 trials proved nothing (the history check ran out of time; give it more time)"},
		{Tally{Trials: 10, Inconclusive: 4, Unsynchronized: 4}, "kv: inconclusive: 4 of 10 trials proved nothing (answers came before the release)"},
		{Tally{Trials: 10, Inconclusive: 4, HistoryUnknown: 2, FirstError: "timeout"}, "kv: inconclusive: 4 of 10 trials proved nothing (0 failed requests; first: timeout)"},
		{Tally{Trials: 10, Inconclusive: 4}, "kv: inconclusive: 4 of 10 trials proved nothing;"},
	}
	for _, tt := range tests {
		got := tt.s.InconclusiveWhy("kv")
		if !strings.HasPrefix(got, tt.want) || strings.Contains(got, "--") {
			t.Errorf("InconclusiveWhy = %q, want it to start %q and name no flag", got, tt.want)
		}
	}
}
