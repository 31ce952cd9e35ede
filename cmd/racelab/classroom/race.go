package classroom

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile/sqlrace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/sqldb"
)

// A SQL race on the page (Config.Race): one race file's transactions
// beside each database serve was given (read committed beside
// serializable). The button plays one trial on every database at once
// through the engine, as racelab run FILE -t NAME=URL does, and each
// database shows its verdict, the lane of each transaction (what it read
// and wrote, where it blocked, how it ended) and the same in words. The
// databases serve no HTTP contract, so there are no keys to watch and no
// curl lines: the race file is the whole of what is sent.

// racePage is the page of the race sc over stores, every one of which
// must be a database it plays on.
func racePage(sc *engine.Scenario, stores []*served) (storyPage, error) {
	for _, s := range stores {
		if !sc.Plays(s.target.Store) {
			return storyPage{}, fmt.Errorf("classroom: race %s plays on databases; store %s (%s) is not one", sc.Name, s.label, s.target.Name())
		}
	}
	return storyPage{sc: sc, sql: true}, nil
}

// txView is one transaction of a SQL race's trial as the page says it.
type txView struct {
	// Tx is the transaction's number, from 1 as its lane is.
	Tx int `json:"tx"`
	// Outcome is how it ended: committed, aborted (with the database's
	// code), error, or rolled back.
	Outcome string `json:"outcome"`
	Retries int    `json:"retries,omitempty"`
	// Events are its timeline's lines, in words.
	Events []string `json:"events"`
}

// transactions reads each transaction's timeline off the trial's
// answers, where the race file keeps it (sqlrace.Answer).
func transactions(t *results.Trial) []txView {
	if t.Readback == nil {
		return nil
	}
	out := make([]txView, 0, len(t.Readback.Answers))
	for i, a := range t.Readback.Answers {
		v := txView{Tx: i + 1, Outcome: "no answer", Events: []string{}}
		var tx sqlrace.Answer
		if a.Body == "" || json.Unmarshal([]byte(a.Body), &tx) != nil {
			out = append(out, v)
			continue
		}
		v.Outcome, v.Retries = txOutcome(tx), tx.Retries
		for _, e := range tx.Timeline {
			v.Events = append(v.Events, txEventWords(e))
		}
		out = append(out, v)
	}
	return out
}

// txOutcome says how a transaction ended.
func txOutcome(tx sqlrace.Answer) string {
	switch {
	case tx.Committed:
		return "committed"
	case tx.Aborted:
		return withCode("aborted", tx.Code)
	case tx.Error:
		return withCode("error", tx.Code)
	}
	return "rolled back"
}

// txEventWords says one line of a transaction's timeline: its instant
// from the release, then what it did.
func txEventWords(e sqlrace.Event) string {
	words := e.What
	switch e.What {
	case "read":
		words = "read " + e.Value
	case "wrote":
		words = "wrote " + firstSQLLine(e.SQL) // Rows counts rows returned, none for an UPDATE
	case "blocked":
		words = "blocked at " + firstSQLLine(e.SQL)
		if e.SQL == "" {
			words = "blocked at its commit"
		}
	case "aborted", "error":
		words = withCode(e.What, e.Code)
	}
	return fmt.Sprintf("%.1f ms %s", e.AtMS, words)
}

func withCode(what, code string) string {
	if code == "" {
		return what
	}
	return what + " (" + code + ")"
}

// firstSQLLine is a statement's first line, for a line of words.
func firstSQLLine(q string) string {
	q, _, _ = strings.Cut(strings.TrimSpace(q), "\n")
	return q
}

// raceVerdict is a database's verdict on the race in the page's words:
// held, broken or inconclusive. The file's rule says what must hold on
// every database, so a broken one is BROKEN whatever its level promised;
// an errored transaction or readback proves nothing, never "holds".
func raceVerdict(t *results.Trial) string {
	switch {
	case t.Broken:
		return "✗ BROKEN"
	case t.Inconclusive():
		return "? inconclusive: a transaction or the readback failed, so this trial proves nothing"
	default:
		return "✓ holds"
	}
}

// databaseWords says what a database of the race is: its kind and the
// isolation level its transactions run at.
func databaseWords(store any) (string, bool) {
	db, ok := store.(*sqldb.DB)
	if !ok {
		return "", false
	}
	level, err := db.Isolation()
	if err != nil { // refused when serve parsed it: cannot happen
		return string(db.Kind()), true
	}
	return fmt.Sprintf("%s at isolation %s", db.Kind(), level), true
}

// txAnswerOf is request q's transaction, when trial t is a SQL race's.
func txAnswerOf(t *results.Trial, q *results.Request) (sqlrace.Answer, bool) {
	var tx sqlrace.Answer
	if t.Readback == nil || q.Index < 0 || q.Index >= len(t.Readback.Answers) {
		return tx, false
	}
	a := t.Readback.Answers[q.Index]
	// A transaction's answer has no HTTP status, and a timeline.
	ok := a.Status == 0 && a.Body != "" && json.Unmarshal([]byte(a.Body), &tx) == nil && len(tx.Timeline) > 0
	return tx, ok
}

// answerWords is what request q of trial t was told, for its lane: a SQL
// transaction says how it ended (committed, aborted with its code), a
// request what it was answered.
func answerWords(t *results.Trial, q *results.Request) string {
	if tx, ok := txAnswerOf(t, q); ok && q.Outcome != results.Errored {
		return txOutcome(tx)
	}
	return q.AnswerWords()
}

// laneOf says what a lane of trial t stands for.
func laneOf(t *results.Trial) string {
	if len(t.Requests) > 0 {
		if _, ok := txAnswerOf(t, &t.Requests[0]); ok {
			return "transaction"
		}
	}
	return "request"
}

// keepReplay keeps a SQL race's trial, database by database, as the
// replay view steps through it: a race on databases has no seed to
// replay, so the replay is the button's last trial.
func (r *Room) keepReplay(sc *engine.Scenario, parts []replayPart) {
	file := "FILE"
	if sc.Settings != nil && sc.Settings.Race != nil {
		file = sc.Settings.Race.Path
	}
	out := replayJSON{Story: sc.Name, Title: sc.Title, Text: sc.Story, Rule: sc.Rule, Fix: sc.Fix, Replays: parts,
		Footer: fmt.Sprintf("This is the last trial the button played. Replay it beside its fix: racelab explain %s -t DATABASE --fixed DATABASE; more trials: racelab run %s -t NAME=DATABASE --trials 20", file, file)}
	data, err := json.Marshal(out)
	if err != nil { // plain data: cannot happen
		return
	}
	r.replayMu.Lock()
	defer r.replayMu.Unlock()
	r.replays[sc.Name] = data
}
