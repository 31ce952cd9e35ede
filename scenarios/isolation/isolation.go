// Package isolation measures Hermitage's table (github.com/ept/hermitage)
// on real databases: each of its ten tests, a SQL race file replaying its
// script (scenarios/races/sql, embedded by scenarios.Hermitage), runs once at every isolation level a
// target database has, and each cell says what the database did:
// prevented the anomaly (by blocking, by aborting, or by showing an
// older snapshot), or let it happen. `racelab isolation` prints the
// table; the README puts it beside Hermitage's published cells.
package isolation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/racefile/sqlrace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/sqldb"
)

// DefaultTimeout bounds each test's trial on each level: a blocked
// statement waits for a lock the order releases a step later, or for
// the database's deadlock detection (PostgreSQL's deadlock_timeout, 1 s).
const DefaultTimeout = 30 * time.Second

// Outcome is a cell's verdict.
type Outcome string

const (
	// Prevented: the rule held, the anomaly did not happen.
	Prevented Outcome = "prevented"
	// Anomaly: the rule broke, the database let the anomaly happen.
	Anomaly Outcome = "anomaly"
	// Unknown: the trial proved nothing (an error, a statement that
	// failed other than by the database's refusal).
	Unknown Outcome = "unknown"
)

// Cell is one test measured on one target at one level.
type Cell struct {
	Test    string  `json:"test"`
	Outcome Outcome `json:"outcome"`
	// Blocked and Aborted say how the database prevented it: a statement
	// waited on a lock, a transaction was refused (40001, 1213, BUSY).
	Blocked bool `json:"blocked,omitempty"`
	Aborted bool `json:"aborted,omitempty"`
	// Why is the rule's account of a broken trial or the cause of an
	// unknown one.
	Why string `json:"why,omitempty"`
}

// Short is the cell as the table prints it.
func (c Cell) Short() string {
	switch c.Outcome {
	case Anomaly:
		return "—"
	case Unknown:
		return "?"
	}
	var how []string
	if c.Blocked {
		how = append(how, "blocked")
	}
	if c.Aborted {
		how = append(how, "aborted")
	}
	if len(how) == 0 {
		return "✓"
	}
	return "✓ " + strings.Join(how, "+")
}

// Row is one target at one level.
type Row struct {
	Target string `json:"target"`
	Level  string `json:"level"`
	Cells  []Cell `json:"cells"`
}

// level is one target at one level, as the run names it.
type level struct {
	target, level, spec string
}

// levels are the levels of target raw (NAME=URL or URL) to measure: the
// one its URL names, else every level its database has. A URL that is
// not a database is a usage error.
func levels(raw string) ([]level, error) {
	name, u := engine.SplitTarget(raw)
	db, err := sqldb.Open(u)
	if err != nil {
		return nil, fmt.Errorf("-t %s: %w%.0w", sqldb.Redact(raw), err, results.ErrUsage)
	}
	if name == "" {
		name = string(db.Kind())
	}
	if lv := db.Param("isolation"); lv != "" {
		lv, err := db.Isolation()
		if err != nil {
			return nil, fmt.Errorf("-t %s: %w%.0w", sqldb.Redact(raw), err, results.ErrUsage)
		}
		return []level{{name, lv, name + "." + lv + "=" + u}}, nil
	}
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	var out []level
	for _, lv := range db.Levels() {
		out = append(out, level{name, lv, name + "." + lv + "=" + u + sep + "isolation=" + lv})
	}
	return out, nil
}

// Measure runs every Hermitage test at every level of each target (raw
// -t values), the targets side by side and each one's tests one after
// another (two levels of one database at once would take each other's
// locks), and returns a row per target and level, in the order given.
func Measure(ctx context.Context, targets []string, timeout time.Duration) ([]Row, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("no target; want -t NAME=URL with a postgres://…, mysql://… or sqlite:PATH URL%.0w", results.ErrUsage)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	files, err := hermitage()
	if err != nil {
		return nil, err
	}
	groups := make([][]level, len(targets))
	for i, raw := range targets {
		if groups[i], err = levels(raw); err != nil {
			return nil, err
		}
	}
	rows := make([][]Row, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() { rows[i], errs[i] = measureTarget(ctx, files, g, timeout) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(rows...), nil
}

// hermitage parses the embedded Hermitage files, in the table's order.
func hermitage() ([]*racefile.File, error) {
	var out []*racefile.File
	for _, t := range scenarios.HermitageTests {
		data, err := scenarios.Hermitage.ReadFile("races/sql/" + t.File)
		if err != nil {
			return nil, err
		}
		f, err := racefile.Parse(t.File, data)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// measureTarget runs every test on one target's levels: one run per
// test, a trial per level (order: replays one interleaving exactly).
func measureTarget(ctx context.Context, files []*racefile.File, g []level, timeout time.Duration) ([]Row, error) {
	rows := make([]Row, len(g))
	specs := make([]string, len(g))
	for j, l := range g {
		rows[j] = Row{Target: l.target, Level: l.level}
		specs[j] = l.spec
	}
	for k, f := range files {
		test := scenarios.HermitageTests[k].Name
		sc, err := f.ScenarioWith(nil, racefile.Options{Targets: specs})
		if err != nil {
			return nil, err
		}
		res, err := engine.Run(ctx, engine.Plan{Scenario: sc, Trials: 1, Targets: specs, Timeout: timeout, Expect: engine.OverrideRace})
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for j := range rows {
			rows[j].Cells = append(rows[j].Cells, cellOf(test, res.Targets[j]))
		}
	}
	return rows, nil
}

// cellOf reads a test's verdict on one level from its one trial.
func cellOf(test string, tr results.TargetResult) Cell {
	c := Cell{Test: test, Outcome: Unknown}
	if tr.Error != "" || len(tr.Trials) == 0 {
		c.Why = cmpOr(tr.Error, "no trial ran")
		return c
	}
	t := tr.Trials[0]
	switch {
	case t.Broken:
		c.Outcome, c.Why = Anomaly, t.Why
	case t.Inconclusive():
		c.Why = "proved nothing"
		if t.Readback != nil {
			c.Why = cmpOr(t.Readback.Cause, t.Readback.Error, c.Why)
		}
		for _, r := range t.Requests {
			if r.Error != "" {
				c.Why = r.Error
			}
		}
	default:
		c.Outcome = Prevented
	}
	if t.Readback != nil {
		for _, a := range t.Readback.Answers {
			var tx sqlrace.Answer
			if json.Unmarshal([]byte(a.Body), &tx) != nil {
				continue
			}
			c.Aborted = c.Aborted || tx.Aborted
			for _, e := range tx.Timeline {
				c.Blocked = c.Blocked || e.What == "blocked"
			}
		}
	}
	return c
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Write prints the table: a row per target and level, a column per test;
// ✓ prevented (and how: blocked, aborted), — the anomaly happened, ? the
// trial proved nothing (its cause under the table).
func Write(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"TARGET", "LEVEL"}
	for _, t := range scenarios.HermitageTests {
		head = append(head, t.Name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var notes []string
	for _, r := range rows {
		line := []string{r.Target, r.Level}
		for _, c := range r.Cells {
			line = append(line, c.Short())
			if c.Outcome == Unknown {
				notes = append(notes, fmt.Sprintf("%s %s %s: %s", r.Target, r.Level, c.Test, c.Why))
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n✓ prevented (blocked: a statement waited on a lock; aborted: the database refused a transaction) · — the anomaly happened · ? proved nothing")
	for _, n := range notes {
		if err == nil {
			_, err = fmt.Fprintln(w, n)
		}
	}
	return err
}
