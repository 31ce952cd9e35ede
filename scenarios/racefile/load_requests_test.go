package racefile_test

import (
	"context"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	loadpkg "github.com/racelab/racelab/scenarios/load"
)

// requestsRace is ten-hits-one-view with a rule on `requests`: every
// request a key got was allowed and counted. Under load a key keeps its
// requests' counts, not the requests, so `requests` must come from the
// counts; zero there (or the whole load's) breaks every key.
const requestsRace = `race: requests-per-key
key: slug
requests: 10
burst:
  - request: POST /hit/{{key}}
    allowed: status == 200
readback:
  - request: GET /get/{{key}}
    as: post
counted: post.views
rule: requests > 0 && allowed == requests && post.views == requests
`

// TestLoadRequestsPerKey: under load, `requests` in a rule is the
// requests that key got (allowed + refused + errors), not none and not the
// whole load's: the fixed store holds the rule on every key, and the keys'
// requests add up to the load.
func TestLoadRequestsPerKey(t *testing.T) {
	const keys, requests = 3, 30
	_, sc := loadText(t, requestsRace)
	res, err := loadpkg.Load(context.Background(), loadpkg.LoadPlan{
		Scenario: sc, Targeting: engine.Targeting{Targets: []string{serveStore(t, "sqlite")}}, Concurrency: 4, Requests: requests, Keys: keys, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	lt := &res.Targets[0]
	if lt.Error != "" || lt.Keys.Trials != keys || lt.Keys.Broken != 0 || lt.Keys.Inconclusive != 0 || lt.Sent != requests {
		t.Errorf("error %q, sent %d, %d keys judged, %d broken (first %q), %d inconclusive (first error %q); want %d sent, %d keys holding",
			lt.Error, lt.Sent, lt.Keys.Trials, lt.Keys.Broken, lt.Keys.FirstWhy, lt.Keys.Inconclusive, lt.Keys.FirstError, requests, keys)
	}
}
