package report_test

import (
	"testing"
	"time"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios/results"
)

// TestErasures: a keyed write computed from a value the last landing did
// not leave erases it; a SQL transaction's steps carry no key (its write
// is a statement, not the value it left), so two transactions that read
// the same rows and then both write erase nothing a lane can claim,
// whether or not the race lost an update.
func TestErasures(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	kv := &results.Trial{Requests: []results.Request{
		{Index: 0, Steps: []results.Step{{At: ms(1), Op: "read", Key: "k", Value: ""}, {At: ms(3), Op: "write", Key: "k", Value: "1"}}},
		{Index: 1, Steps: []results.Step{{At: ms(2), Op: "read", Key: "k", Value: ""}, {At: ms(4), Op: "write", Key: "k", Value: "1"}}},
		{Index: 2, Steps: []results.Step{{At: ms(5), Op: "read", Key: "k", Value: "1"}, {At: ms(6), Op: "write", Key: "k", Value: "2"}}},
	}}
	if got := report.Erasures(kv); len(got) != 1 || got[1] != 0 {
		t.Errorf("kv: erasures %v; want #1 erased #0's update, and #2, which read it, none", got)
	}
	sql := &results.Trial{Requests: []results.Request{
		{Index: 0, Steps: []results.Step{{At: ms(1), Op: "read", Value: `[{"balance":100}]`}, {At: ms(3), Op: "write", Value: "UPDATE racelab_accounts SET balance = ? WHERE id = ?"}}},
		{Index: 1, Steps: []results.Step{{At: ms(2), Op: "read", Value: `[{"balance":100}]`}, {At: ms(4), Op: "write", Value: "UPDATE racelab_accounts SET balance = ? WHERE id = ?"}}},
	}}
	if got := report.Erasures(sql); len(got) != 0 {
		t.Errorf("sql: erasures %v; want none claimed from statements", got)
	}
}
