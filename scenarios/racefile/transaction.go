package racefile

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"gopkg.in/yaml.v3"

	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/scenarios/racefile/sqlrace"
	"github.com/racelab/racelab/scenarios/results"
)

// A SQL race: the burst's entries are transaction:s, fired at the target
// database, each on a connection of its own (package sqlrace runs them,
// sqlplay.go plays the file through it).

// MaxRetry bounds retry: on a transaction.
const MaxRetry = 100

// Transaction is a burst entry of a SQL race: its statements in order,
// with the barriers between them, and how often an aborted run of it is
// tried again.
type Transaction struct {
	Steps []*TxStep
	Retry int
}

// TxStep is one step of a transaction: a statement (SQL, its answer named
// As for the steps after it), or a barrier every transaction reaches
// before any goes on.
type TxStep struct {
	Line, Col int
	SQL       *SQLRead
	As        string
	Barrier   bool
}

// def is what package sqlrace runs of the transaction.
func (t *Transaction) def() *sqlrace.Tx {
	d := &sqlrace.Tx{Retry: t.Retry}
	for _, s := range t.Steps {
		st := sqlrace.Step{As: s.As, Barrier: s.Barrier}
		if s.SQL != nil {
			st.Query, st.Args = s.SQL.Query, s.SQL.args
		}
		d.Steps = append(d.Steps, st)
	}
	return d
}

// statements are the transaction's statements, barriers left out: step
// N of order: is statements()[N-1].
func (t *Transaction) statements() []*TxStep {
	var out []*TxStep
	for _, s := range t.Steps {
		if !s.Barrier {
			out = append(out, s)
		}
	}
	return out
}

// SQLRace says whether the file is a SQL race: its burst fires
// transactions at a database rather than requests at a service.
func (f *File) SQLRace() bool { return len(f.Burst) > 0 && f.Burst[0].Tx != nil }

// transactions says whether a burst node holds a transaction: entry.
func transactions(burst *yaml.Node) bool {
	if burst == nil || burst.Kind != yaml.SequenceNode {
		return false
	}
	return slices.ContainsFunc(burst.Content, func(n *yaml.Node) bool { return n.Kind == yaml.MappingNode && hasKey(n, "transaction") })
}

// txEnv is the environment of a transaction's allowed: and refused:.
var txEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(expr.Libraries(),
		cel.Variable("committed", cel.BoolType),
		cel.Variable("aborted", cel.BoolType),
		cel.Variable("error", cel.BoolType),
		cel.Variable("retries", cel.IntType))...)
})

// txKeys are the keys of a SQL race's burst entry, and of a step of its
// transaction.
var (
	txKeys     = []string{"transaction", "kind", "count", "allowed", "refused", "retry"}
	txStepKeys = []string{"sql", "args", "as", "db", "barrier"}
)

// sqlStep reads a SQL race's own steps: a sql: setup step, a burst's
// transaction. ok is false for any other step, which step reads.
func (p *parser) sqlStep(n *yaml.Node, list string) (s *Step, ok bool, err error) {
	switch {
	case list == "setup" && hasKey(n, "sql"):
		if !p.sqlRace {
			return nil, true, p.at(n, "a sql: setup step belongs to a SQL race (a burst of transaction:s); set up a service's state with requests")
		}
		if hasKey(n, "exec") {
			return nil, true, p.at(n, "exec: is for a readback; a setup step runs sql: on the target")
		}
		s, err = p.storeStep(n, list)
		if err == nil {
			p.took(s, s.As)
		}
		return s, true, err
	case list == "burst" && p.sqlRace:
		s, err = p.transaction(n)
		return s, true, err
	}
	return nil, false, nil
}

// transaction reads one transaction: entry of a SQL race's burst.
func (p *parser) transaction(n *yaml.Node) (*Step, error) {
	if !hasKey(n, "transaction") {
		return nil, p.at(n, "a SQL race's burst is all transaction:s; want - transaction: [- sql: …] here (racing HTTP requests and transactions together is not supported)")
	}
	fields, err := p.mapping(n, txKeys, "a transaction entry")
	if err != nil {
		return nil, err
	}
	s := &Step{Line: n.Line, Col: n.Column, Kind: "transaction", Tx: &Transaction{}}
	tn := fields["transaction"]
	if tn.Kind != yaml.SequenceNode || len(tn.Content) == 0 {
		return nil, p.at(tn, "transaction: is %s; want a list of steps, each - sql: STATEMENT or - barrier: true", nodeKind(tn))
	}
	if len(tn.Content) > MaxSteps {
		return nil, p.at(tn.Content[MaxSteps], "transaction: more than %d steps; a race file is one race", MaxSteps)
	}
	var local []string
	for _, item := range tn.Content {
		st, err := p.txStep(item, local)
		if err != nil {
			return nil, err
		}
		if st.As != "" {
			local = append(local, st.As)
		}
		s.Tx.Steps = append(s.Tx.Steps, st)
	}
	if len(s.Tx.statements()) == 0 {
		return nil, p.at(tn, "transaction: has only barriers; want a sql: statement")
	}
	if err := p.kindAndCount(fields, n, s, "deposit"); err != nil {
		return nil, err
	}
	if r := fields["retry"]; r != nil {
		v, err := strconv.Atoi(r.Value)
		if r.Kind != yaml.ScalarNode || err != nil || v < 0 || v > MaxRetry {
			return nil, p.at(r, "retry: %q; want how many times an aborted transaction is tried again, a whole number from 0 to %d", r.Value, MaxRetry)
		}
		s.Tx.Retry = v
	}
	if s.Allowed, err = p.expr(fields, "allowed", txEnv, boolType, "committed"); err != nil {
		return nil, err
	}
	if s.Refused, err = p.expr(fields, "refused", txEnv, boolType, "aborted"); err != nil {
		return nil, err
	}
	return s, nil
}

// txStep reads one step of a transaction; local are the names the steps
// before it gave (as:), which its args may read besides the setup's.
func (p *parser) txStep(n *yaml.Node, local []string) (*TxStep, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.at(n, "a transaction step is %s; want - sql: STATEMENT or - barrier: true", nodeKind(n))
	}
	fields, err := p.mapping(n, txStepKeys, "a transaction step")
	if err != nil {
		return nil, err
	}
	st := &TxStep{Line: n.Line, Col: n.Column}
	if b := fields["barrier"]; b != nil {
		if b.Kind != yaml.ScalarNode || b.Value != "true" || len(fields) > 1 {
			return nil, p.at(b, "barrier: want barrier: true alone in its step: every transaction reaches it before any goes on")
		}
		st.Barrier = true
		return st, nil
	}
	sq := fields["sql"]
	if sq == nil {
		return nil, p.at(n, "no sql: here; want - sql: STATEMENT or - barrier: true")
	}
	// Its args read the setup's names and the transaction's own so far;
	// the rule reads neither of the latter directly (answers[i].body).
	saved := p.names
	p.names = append(slices.Clone(saved), local...)
	st.SQL, err = p.sqlRead(fields, sq, n)
	p.names = saved
	if err != nil {
		return nil, err
	}
	if st.SQL.DB != "" {
		return nil, p.at(fields["db"], "db: a transaction runs on the target; leave db: out")
	}
	if a := fields["as"]; a != nil {
		if st.As, err = p.str(fields, n, "as", false); err != nil {
			return nil, err
		}
		switch {
		case !asName.MatchString(st.As):
			return nil, p.at(a, "as: %q; want a name of letters, digits and _, such as acct", st.As)
		case slices.Contains(reserved, st.As) || slices.Contains(saved, st.As) || slices.Contains(local, st.As):
			return nil, p.at(a, "as: %q is a name already taken; want another, such as %s_row", st.As, st.As)
		}
	}
	return st, nil
}

// sqlRaceEnd reads what only a SQL race has (order:, cleanup:) once its
// burst is read, and refuses them in any other race.
func (p *parser) sqlRaceEnd(fields map[string]*yaml.Node) error {
	f := p.f
	if !p.sqlRace {
		for _, k := range []string{"order", "cleanup"} {
			if n := fields[k]; n != nil {
				return p.at(n, "%s: belongs to a SQL race (a burst of transaction:s)", k)
			}
		}
		return nil
	}
	for _, s := range f.Setup {
		if s.SQL == nil {
			return &Error{File: p.path, Line: s.Line, Col: s.Col, Msg: "a SQL race's setup is sql: statements on the target; want - sql: STATEMENT"}
		}
	}
	for _, s := range f.Readback {
		if s.Exec != nil {
			return &Error{File: p.path, Line: s.Line, Col: s.Col, Msg: "a SQL race reads back with sql:; exec: is for a service's store"}
		}
	}
	if err := p.cleanup(fields["cleanup"]); err != nil {
		return err
	}
	return p.order(fields["order"])
}

// cleanup reads cleanup:, statements run after each trial's readback
// that remove what its setup and transactions left (its key's rows).
func (p *parser) cleanup(n *yaml.Node) error {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 || len(n.Content) > MaxSteps {
		return p.at(n, "cleanup: is %s; want a list of statements, such as - sql: DELETE FROM accounts WHERE id = ?", nodeKind(n))
	}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode || !hasKey(item, "sql") {
			return p.at(item, "a cleanup step is %s; want - sql: STATEMENT with its args:", nodeKind(item))
		}
		fields, err := p.mapping(item, []string{"sql", "args"}, "a cleanup step")
		if err != nil {
			return err
		}
		r, err := p.sqlRead(fields, fields["sql"], item)
		if err != nil {
			return err
		}
		p.f.Cleanup = append(p.f.Cleanup, &Step{Line: item.Line, Col: item.Column, SQL: r, Kind: "cleanup"})
	}
	return nil
}

// Notes are what a file may want said before it runs, though it is
// valid: a SQL race whose setup writes rows but that declares no
// cleanup: leaves each trial's rows in the database.
func (f *File) Notes() []string {
	if f.SQLRace() && len(f.Setup) > 0 && len(f.Cleanup) == 0 {
		return []string{"no cleanup:, so each trial's rows stay in the database; add cleanup: - sql: DELETE FROM TABLE WHERE COLUMN = ? with args: [key]"}
	}
	return nil
}

// order reads order:, the fixed interleaving: every statement of every
// transaction once, each transaction's in its own order, then its
// commit or rollback. No barrier or retry goes with it: the order says
// every point where one transaction waits for another.
func (p *parser) order(n *yaml.Node) error {
	if n == nil {
		return nil
	}
	f := p.f
	const want = "want a list such as [0.1, 1.1, 0.2, 1.2, 0.commit, 1.commit] (transaction.step, steps from 1)"
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return p.at(n, "order: is %s; %s", nodeKind(n), want)
	}
	for _, s := range f.Burst {
		for _, st := range s.Tx.Steps {
			if st.Barrier {
				return &Error{File: p.path, Line: st.Line, Col: st.Col, Msg: "barrier: and order: both given; the order says where each transaction waits, so leave the barrier out"}
			}
		}
		if s.Tx.Retry > 0 {
			return &Error{File: p.path, Line: s.Line, Col: s.Col, Msg: "retry: and order: both given; a fixed order replays one interleaving, so leave retry: out"}
		}
	}
	next := make([]int, f.Requests) // the next statement of each, from 1
	ended := make([]bool, f.Requests)
	for _, item := range n.Content {
		tx, step, ok := strings.Cut(item.Value, ".")
		i, err := strconv.Atoi(tx)
		if item.Kind != yaml.ScalarNode || !ok || err != nil {
			return p.at(item, "order: %s; %s", nodeKind(item), want)
		}
		if i < 0 || i >= f.Requests {
			return p.at(item, "order: %s: no transaction %d; the burst has %d, numbered from 0", item.Value, i, f.Requests)
		}
		stmts := f.kindOf(i).Tx.statements()
		o := sqlrace.OrderStep{Tx: i}
		switch step {
		case "commit", "rollback":
			o.End = step
		default:
			if o.Step, err = strconv.Atoi(step); err != nil || o.Step < 1 {
				return p.at(item, "order: %s; %s", item.Value, want)
			}
		}
		switch {
		case ended[i]:
			return p.at(item, "order: %s comes after transaction %d ended; its commit or rollback goes last", item.Value, i)
		case o.End != "" && next[i] < len(stmts):
			return p.at(item, "order: %s before %d.%d; every statement runs before the transaction ends", item.Value, i, next[i]+1)
		case o.End == "" && o.Step != next[i]+1:
			if o.Step > len(stmts) {
				return p.at(item, "order: %s: transaction %d has %s", item.Value, i, results.Plural(int64(len(stmts)), "statement"))
			}
			return p.at(item, "order: %s; want %d.%d next: a transaction's statements run in their order, once each", item.Value, i, next[i]+1)
		}
		if o.End != "" {
			ended[i] = true
		} else {
			next[i]++
		}
		f.Order = append(f.Order, o)
	}
	for i, e := range ended {
		if !e {
			return p.at(n, "order: transaction %d never ends; want %d.commit or %d.rollback last", i, i, i)
		}
	}
	return nil
}
