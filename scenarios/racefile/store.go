package racefile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"gopkg.in/yaml.v3"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/sqldb"
)

// Readbacks that reach the store itself rather than the API: a sql:
// query on the application's own database, or an exec: command whose
// standard output is JSON. A race the API hides (duplicate rows behind a
// boolean answer) shows only there.

// MaxExecOutput bounds what an exec: readback may print: its JSON is
// kept in the trial for the rule, as an answer's body is.
const MaxExecOutput = 1 << 20

// SQLRead is a sql: readback: a query, the database it runs on, and its
// arguments, CEL expressions bound as parameters.
type SQLRead struct {
	Query string
	DB    string
	Args  []*expr.CEL
}

// ExecRead is an exec: readback: a command and its arguments, each a
// template, run without a shell.
type ExecRead struct {
	Argv []*expr.Template
}

// Options are what the command line gives a race file beyond its text:
// where its databases are, whether it may run commands, and the targets
// it will play on (-t's values), to check every target has its databases
// before anything is sent.
type Options struct {
	// Databases are --db's values: NAME=URL for every target,
	// TARGET.NAME=URL for one.
	Databases []string
	// AllowExec is --allow-exec: exec: readbacks run commands on this
	// machine, which a file from elsewhere must not do unasked.
	AllowExec bool
	// Targets are -t's values (SPEC or NAME=SPEC).
	Targets []string
	// ShowSecrets shows the race's secrets in its outputs and errors
	// (--show-secrets) instead of Hidden.
	ShowSecrets bool
}

// dbFlag is one --db value.
type dbFlag struct {
	target, name, url string
}

// parseDatabases reads --db's values, each checked against the names the
// file declares.
func (f *File) parseDatabases(raw []string) ([]dbFlag, error) {
	var out []dbFlag
	for _, v := range raw {
		key, u, ok := strings.Cut(v, "=")
		shown := key + "=" + sqldb.Redact(u)
		target, name := "", key
		if i := strings.LastIndex(key, "."); i >= 0 {
			target, name = key[:i], key[i+1:]
		}
		switch {
		case !ok || name == "" || u == "" || strings.HasSuffix(key, "."):
			return nil, usagef("--db %s: want NAME=URL for every target or TARGET.NAME=URL for one, with URL %s", shown, sqldb.URLForms)
		case !slices.Contains(f.Databases, name):
			return nil, usagef("--db %s: %s declares no database %q; %s", shown, f.Path, name, f.declared())
		}
		if _, err := sqldb.Open(u); err != nil {
			return nil, usagef("--db %s: %v", shown, err)
		}
		for _, d := range out {
			if d.target == target && d.name == name {
				return nil, usagef("--db %s: %s is given twice; give it once", shown, key)
			}
		}
		out = append(out, dbFlag{target, name, u})
	}
	return out, nil
}

func (f *File) declared() string {
	if len(f.Databases) == 0 {
		return "it reads no database (databases: [NAME] declares one)"
	}
	return "it declares " + strings.Join(f.Databases, ", ")
}

func usagef(format string, args ...any) error {
	return fmt.Errorf("%s%.0w", fmt.Sprintf(format, args...), results.ErrUsage)
}

// checkStore checks the options against the file: every --db names a
// database the file declares and a target of the run, every database
// has a URL for every target, and a file with exec: readbacks is run
// only with AllowExec.
func (f *File) checkStore(o Options) ([]dbFlag, error) {
	dbs, err := f.parseDatabases(o.Databases)
	if err != nil {
		return nil, err
	}
	if !o.AllowExec {
		for _, s := range f.Readback {
			if s.Exec != nil {
				return nil, &Error{File: f.Path, Line: s.Line, Col: s.Col,
					Msg: fmt.Sprintf("readback exec: %s runs a command on this machine; give --allow-exec to let racelab run it", s.Exec.Argv[0].Text())}
			}
		}
	}
	type target struct{ name, spec string }
	var ts []target
	for _, raw := range o.Targets {
		name, spec := engine.SplitTarget(raw)
		ts = append(ts, target{name, spec})
	}
	matches := func(key string, t target) bool {
		return key == t.name || t.name == "" && key == t.spec
	}
	for _, d := range dbs {
		if d.target != "" && !slices.ContainsFunc(ts, func(t target) bool { return matches(d.target, t) }) {
			return nil, usagef("--db %s.%s=…: no target %q in this run; name one with -t %s=URL", d.target, d.name, d.target, d.target)
		}
	}
	for _, name := range f.Databases {
		for _, t := range ts {
			if !slices.ContainsFunc(dbs, func(d dbFlag) bool { return d.name == name && (d.target == "" || matches(d.target, t)) }) {
				who := "--db " + name + "=URL"
				if len(ts) > 1 {
					who += fmt.Sprintf(" (every target) or --db %s.%s=URL", cmpOr(t.name, t.spec), name)
				}
				return nil, usagef("%s reads database %s, which no --db gives for target %s; give %s", f.Path, name, cmpOr(t.name, t.spec), who)
			}
		}
	}
	return dbs, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// storeTarget is what a player knows of its target for the store
// readbacks: its name and URL, and its databases' URLs by name.
type storeTarget struct {
	name, url string
	dbs       map[string]string
}

// named is a store that knows the name it was given (-t NAME=URL) and
// its URL: httpapi.Client.
type named interface {
	Name() string
	URL() string
}

// storeTargetOf finds the target's databases among dbs.
func storeTargetOf(store any, dbs []dbFlag) storeTarget {
	st := storeTarget{dbs: map[string]string{}}
	if n, ok := store.(named); ok {
		st.name, st.url = n.Name(), n.URL()
	}
	shown := sqldb.Redact(st.url)
	// Every target's first, then this one's over them.
	for _, d := range dbs {
		if d.target == "" {
			st.dbs[d.name] = d.url
		}
	}
	for _, d := range dbs {
		if d.target != "" && (d.target == st.name || st.name == "" && (d.target == st.url || d.target == shown || strings.TrimSuffix(d.target, "/") == strings.TrimSuffix(shown, "/"))) {
			st.dbs[d.name] = d.url
		}
	}
	if st.name == "" {
		st.name = shown
	}
	return st
}

// storeKeys are the keys of a readback that reaches the store.
var storeKeys = []string{"sql", "db", "args", "exec", "as"}

// storeStep reads a sql: or exec: readback, or a SQL race's sql: setup
// step (list "setup"), whose as: is optional.
func (p *parser) storeStep(n *yaml.Node, list string) (*Step, error) {
	fields, err := p.mapping(n, storeKeys, "a sql: or exec: "+list+" step")
	if err != nil {
		return nil, err
	}
	s := &Step{Line: n.Line, Col: n.Column}
	if s.As, err = p.str(fields, n, "as", list == "readback"); err != nil {
		return nil, err
	}
	sq, ex := fields["sql"], fields["exec"]
	switch {
	case sq != nil && ex != nil:
		return nil, p.at(ex, "sql: and exec: both given; want one readback each")
	case ex != nil:
		for _, k := range []string{"db", "args"} {
			if fields[k] != nil {
				return nil, p.at(fields[k], "%s: is for a sql: readback; an exec: readback's arguments are its list", k)
			}
		}
		if s.Exec, err = p.execRead(ex); err != nil {
			return nil, err
		}
	default:
		if s.SQL, err = p.sqlRead(fields, sq, n); err != nil {
			return nil, err
		}
	}
	if err := p.checkAs(fields["as"], s.As); err != nil {
		return nil, err
	}
	s.Kind = list + " " + cmpOr(s.As, "sql")
	return s, nil
}

func (p *parser) sqlRead(fields map[string]*yaml.Node, sq, n *yaml.Node) (*SQLRead, error) {
	r := &SQLRead{}
	if sq.Kind != yaml.ScalarNode || strings.TrimSpace(sq.Value) == "" {
		return nil, p.at(sq, "sql: is %s; want one query, such as sql: SELECT count(*) AS n FROM follows WHERE user_id = ?", nodeKind(sq))
	}
	r.Query = sq.Value
	db := fields["db"]
	switch {
	case db != nil:
		if db.Kind != yaml.ScalarNode || !slices.Contains(p.f.Databases, db.Value) {
			return nil, p.at(db, "db: %s names no database of the file; want one of databases: [%s]", nodeKind(db), strings.Join(p.f.Databases, ", "))
		}
		r.DB = db.Value
	case p.sqlRace:
		// A SQL race's steps run on the target itself unless db: says.
	case len(p.f.Databases) == 1:
		r.DB = p.f.Databases[0]
	case len(p.f.Databases) == 0:
		return nil, p.at(n, "a sql: readback reads a database the file declares; want databases: [app] at the top and --db app=URL when it runs")
	default:
		return nil, p.at(n, "no db: here, and the file declares %s; want db: NAME", strings.Join(p.f.Databases, ", "))
	}
	args := fields["args"]
	if args != nil && args.Kind != yaml.SequenceNode {
		return nil, p.at(args, "args: is %s; want a list of CEL expressions, such as [me.id, key]", nodeKind(args))
	}
	var items []*yaml.Node
	if args != nil {
		items = args.Content
	}
	if want := sqldb.Count(r.Query); want != len(items) {
		return nil, p.at(cmpNode(args, sq), "the query has %s and args: gives %d; want one argument for each ?", results.Plural(int64(want), "placeholder"), len(items))
	}
	names := slices.Clone(p.names)
	env := func() (*cel.Env, error) { return argEnv(names) }
	for i, a := range items {
		x, err := p.expr(map[string]*yaml.Node{"args": a}, "args", env, cel.DynType, "")
		if err != nil {
			return nil, err
		}
		if x == nil {
			return nil, p.at(a, "args: item %d is empty; want a CEL expression", i+1)
		}
		r.Args = append(r.Args, x)
	}
	return r, nil
}

// argEnv is the environment of a sql: readback's arguments: the trial's
// key, i (-1 outside the burst) and trial, and the answers named so far.
func argEnv(names []string) (*cel.Env, error) {
	opts := append(expr.Libraries(),
		cel.Variable("key", cel.StringType),
		cel.Variable("i", cel.IntType),
		cel.Variable("trial", cel.IntType))
	for _, n := range names {
		opts = append(opts, cel.Variable(n, cel.DynType))
	}
	return cel.NewEnv(opts...)
}

func (p *parser) execRead(ex *yaml.Node) (*ExecRead, error) {
	if ex.Kind != yaml.SequenceNode || len(ex.Content) == 0 {
		return nil, p.at(ex, "exec: is %s; want the command and its arguments as a list, such as [./count-rows, \"{{key}}\"] (no shell)", nodeKind(ex))
	}
	r := &ExecRead{}
	for _, a := range ex.Content {
		if a.Kind != yaml.ScalarNode {
			return nil, p.at(a, "exec: an argument is %s; want text", nodeKind(a))
		}
		t, err := p.template(a, a.Value, "exec", 0)
		if err != nil {
			return nil, err
		}
		r.Argv = append(r.Argv, t)
	}
	if r.Argv[0].Literal() && strings.TrimSpace(r.Argv[0].Text()) == "" {
		return nil, p.at(ex.Content[0], "exec: the command is empty; want a program's path or name")
	}
	return r, nil
}

// readStore runs a sql: or exec: readback for the trial, with what was
// read so far in rb, and returns its JSON.
func (p *player) readStore(ctx context.Context, s *Step, st *trialState, rb *results.Readback) (json.RawMessage, error) {
	if s.Exec != nil {
		return p.runExec(ctx, s, st)
	}
	vars := map[string]any{"key": st.vars.Key, "i": int64(-1), "trial": int64(st.vars.Trial)}
	for name, v := range st.vars.Captures {
		vars[name] = v
	}
	for name, b := range rb.Bodies {
		if v, ok := expr.DecodeJSON(b); ok {
			vars[name] = v
		}
	}
	args, err := s.SQL.args(vars)
	if err != nil {
		return nil, fmt.Errorf("readback %s: %w", s.As, err)
	}
	if s.SQL.DB == "" && p.db != nil {
		rows, err := p.db.Read(ctx, s.SQL.Query, args, sqldb.MaxRows)
		if err != nil {
			return nil, fmt.Errorf("readback %s: sql on the target (%s): %w", s.As, p.db, err)
		}
		return json.Marshal(map[string]any{"rows": rows.Rows, "count": len(rows.Rows)})
	}
	u, ok := p.store().dbs[s.SQL.DB]
	if !ok {
		return nil, fmt.Errorf("readback %s: no URL for database %s on %s; give --db %s=URL", s.As, s.SQL.DB, p.store().name, s.SQL.DB)
	}
	db, err := sqldb.Open(u)
	if err != nil {
		return nil, fmt.Errorf("readback %s: %w", s.As, err)
	}
	// Opened and closed for each trial: no connection outlives the run.
	defer db.Close()
	rows, err := db.Read(ctx, s.SQL.Query, args, sqldb.MaxRows)
	if err != nil {
		return nil, fmt.Errorf("readback %s: sql on %s (%s): %w", s.As, s.SQL.DB, db, err)
	}
	return json.Marshal(map[string]any{"rows": rows.Rows, "count": len(rows.Rows)})
}

// args are the query's arguments, its CEL expressions run on vars.
func (r *SQLRead) args(vars map[string]any) ([]any, error) {
	args := make([]any, len(r.Args))
	for i, x := range r.Args {
		v, err := x.Bind(vars)
		if err != nil {
			return nil, fmt.Errorf("args[%d] %s: %w", i, x.Src, err)
		}
		args[i] = v
	}
	return args, nil
}

// runExec runs an exec: readback without a shell: its standard output,
// at most MaxExecOutput bytes, is the JSON named by as:. The run's
// timeout (ctx) bounds it.
func (p *player) runExec(ctx context.Context, s *Step, st *trialState) (json.RawMessage, error) {
	v := st.vars
	v.Captures = maps.Clone(v.Captures)
	v.Captures["target"] = map[string]any{"name": p.store().name, "url": p.store().url}
	argv := make([]string, len(s.Exec.Argv))
	for i, t := range s.Exec.Argv {
		a, err := t.Expand(&v, nil)
		if err != nil {
			return nil, fmt.Errorf("readback %s: exec argument %d: %w", s.As, i, err)
		}
		argv[i] = a
	}
	name := argv[0]
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 4 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("readback %s: exec %s: %w", s.As, name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("readback %s: exec %s: %w", s.As, name, err)
	}
	data, rerr := io.ReadAll(io.LimitReader(out, MaxExecOutput+1))
	if len(data) > MaxExecOutput {
		// Stop it: what it prints past the bound is never read.
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case len(data) > MaxExecOutput:
		return nil, fmt.Errorf("readback %s: exec %s printed more than %d bytes (1 MiB); a readback prints a count or a few rows as JSON", s.As, name, MaxExecOutput)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("readback %s: exec %s: %w", s.As, name, ctx.Err())
	case werr != nil:
		return nil, fmt.Errorf("readback %s: exec %s: %v%s", s.As, name, werr, note(stderr.Bytes()))
	case rerr != nil:
		return nil, fmt.Errorf("readback %s: exec %s: %w", s.As, name, rerr)
	}
	if _, ok := expr.DecodeJSON(data); !ok {
		return nil, fmt.Errorf("readback %s: exec %s printed no JSON%s", s.As, name, note(data))
	}
	return bytes.TrimSpace(data), nil
}

// limited keeps the first n bytes written to it and drops the rest, so
// that a command's stderr is kept for its error, briefly.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(b []byte) (int, error) {
	if l.n > 0 {
		k := min(len(b), l.n)
		_, _ = l.w.Write(b[:k])
		l.n -= k
	}
	return len(b), nil
}

// hasKey says whether mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// databases reads databases:, the names of the databases the file's
// sql: steps read.
func (p *parser) databases(n *yaml.Node) error {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return p.at(n, "databases: is %s; want a list of names, such as [app]; each target gives their URLs with --db app=URL", nodeKind(n))
	}
	for _, d := range n.Content {
		switch {
		case d.Kind != yaml.ScalarNode || !asName.MatchString(d.Value):
			return p.at(d, "databases: %s is not a name; want letters, digits and _, such as app", nodeKind(d))
		case slices.Contains(p.f.Databases, d.Value):
			return p.at(d, "databases: %s is named twice; name it once", d.Value)
		}
		p.f.Databases = append(p.f.Databases, d.Value)
	}
	return nil
}

// readOne is one readback's JSON: a request's answer, or what the store
// itself holds.
func (p *player) readOne(ctx context.Context, s *Step, st *trialState, rb *results.Readback) (map[string]any, error) {
	if s.SQL == nil && s.Exec == nil {
		return p.call(ctx, s, st, st.vars)
	}
	b, err := p.readStore(ctx, s, st, rb)
	if err != nil {
		// The cause counts trials that failed alike: it leaves out the
		// trial's key, and read says "readback" before it.
		cause := strings.TrimPrefix(strings.ReplaceAll(err.Error(), st.vars.Key, "…"), "readback ")
		return nil, &stepError{err.Error(), cause}
	}
	// Numbers stay json.Number, so a big integer keeps every digit.
	v, ok := expr.DecodeJSON(b)
	if !ok {
		return nil, fmt.Errorf("%s read back no JSON", s.As)
	}
	return map[string]any{s.As: v}, nil
}
