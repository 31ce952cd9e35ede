package report_test

import (
	"fmt"
	"os"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios/results"
)

func ExampleParseFormat() {
	f, err := report.ParseFormat("markdown")
	fmt.Println(f, err)
	_, err = report.ParseFormat("pdf")
	fmt.Println(err)
	// Output:
	// markdown <nil>
	// unknown output format "pdf"; want table, json, markdown, junit or html
}

func ExampleRender() {
	r := &results.Result{
		Schema:   results.SchemaVersion,
		Scenario: "five-checkouts",
		Rule:     "at most 1 checkout succeeds per item, and every success is recorded as a claim",
		Requests: 5, Trials: 1, Seed: 1,
		Targets: []results.TargetResult{{
			Target: "kv", Spec: "kv", Guarantee: "none: read, then write", Expect: results.ExpectBreak,
			Trials: []results.Trial{{
				Requests: make([]results.Request, 5), Allowed: 5, Counted: 1, Over: 4, Lost: 4, Damage: "4 oversold",
				Broken: true, Why: "kv: 5 checkouts succeeded for 1 in stock, 1 claim recorded: 4 oversold",
				ReleaseSpread: 51000,
			}},
		}},
	}
	if err := report.Render(os.Stdout, r, report.Table, report.Options{NoColor: true, Width: 80}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// five-checkouts — at most 1 checkout succeeds per item, and every success is
	//   recorded as a claim
	// 5 requests per burst · 1 trial per target · seed 1
	//
	// +--------+---------+---------+---------+-------------+-------------------+
	// | TARGET | ALLOWED | REFUSED | COUNTED | WORST TRIAL | VERDICT           |
	// +--------+---------+---------+---------+-------------+-------------------+
	// | kv     |       5 |       0 |       1 | 4 oversold  | broken (expected) |
	// +--------+---------+---------+---------+-------------+-------------------+
	//
	// kv's guarantee: none: read, then write
	// kv: 5 checkouts succeeded for 1 in stock, 1 claim recorded: 4 oversold
	// release spread: max 51µs across all bursts
}
