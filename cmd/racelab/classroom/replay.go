package classroom

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// The replay is `racelab explain` with its own defaults: the race on the
// KV simulator, the fix on the actor, seed 7, in virtual time, so that
// every screen and every handout shows the same race.
const (
	replayTarget = "kv"
	replayFixed  = "actor"
	replaySeed   = 7
)

// replayJSON is a story's explanation as the replay view steps through it.
type replayJSON struct {
	Story   string       `json:"story"`
	Title   string       `json:"title"`
	Text    string       `json:"text"`
	Rule    string       `json:"rule"`
	Fix     string       `json:"fix"`
	Footer  string       `json:"footer"`
	Replays []replayPart `json:"replays"`
}

type replayPart struct {
	Heading string   `json:"heading"`
	Target  string   `json:"target"`
	Outcome string   `json:"outcome"`
	Lanes   string   `json:"lanes"`
	Steps   []string `json:"steps"`
}

// replay answers GET /classroom/replay?story=NAME with the story's
// explanation: each replay's lanes and the words of each of its steps.
// A replay runs in virtual time on stores of its own, never on the
// served ones, and the same seed always gives the same race, so each
// story's is computed once.
func (r *Room) replay(w http.ResponseWriter, req *http.Request) {
	name := req.URL.Query().Get("story")
	p := r.story(name)
	if p == nil {
		names := make([]string, len(r.pages))
		for i, p := range r.pages {
			names[i] = p.sc.Name
		}
		server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("story %q: want one of %v", name, names))
		return
	}
	sc := p.sc
	r.replayMu.Lock()
	defer r.replayMu.Unlock()
	data, ok := r.replays[sc.Name]
	if !ok && p.sql {
		// Its replay is the button's last trial on the databases
		// (keepReplay), not a seed's on simulated stores.
		server.WriteError(w, http.StatusBadRequest, fmt.Sprintf("race %s has no trial to replay yet: press its button, then step through what each database did", sc.Name))
		return
	}
	if !ok {
		e, err := engine.Explain(r.ctx, &engine.Explainer{Scenario: sc, Catalog: targets.Builtin(), Target: replayTarget, Fixed: replayFixed, Seed: replaySeed})
		if err != nil {
			server.WriteError(w, http.StatusServiceUnavailable, "no replay: "+err.Error())
			return
		}
		out := replayJSON{Story: sc.Name, Title: sc.Title, Text: sc.Story, Rule: sc.Rule, Fix: sc.Fix, Footer: ExplainFooter(sc.Name, replaySeed)}
		for _, rp := range e.Replays {
			l := drawLanes(sc, rp.Trial, rp.Target, rp.Clock)
			out.Replays = append(out.Replays, replayPart{Heading: rp.Heading, Target: rp.Target, Outcome: rp.Outcome, Lanes: l.svg, Steps: l.steps})
		}
		if data, err = json.Marshal(out); err != nil {
			server.WriteError(w, http.StatusInternalServerError, "replay: "+err.Error())
			return
		}
		r.replays[sc.Name] = data
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(data)
}

// ExplainFooter is the last line of an explanation: how to replay it, and
// how to see more trials, as commands to type.
func ExplainFooter(story string, seed int64) string {
	return fmt.Sprintf("Replay it: racelab explain %s --seed %d; see more trials: racelab run %s --trials 100", story, seed, story)
}
