package racefile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/racelab/racelab/internal/readfile"
	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/scenarios/racefile/sqlrace"
	"github.com/racelab/racelab/scenarios/results"
)

// Limits of a race file, in one place.
const (
	// MaxFileBytes bounds a race file: one race is a page of YAML.
	MaxFileBytes = 256 << 10
	// MaxSteps bounds each list of requests (setup, burst, readback).
	MaxSteps = 64
	// DefaultRequests is a race's N when the file gives none.
	DefaultRequests = 10
	// MaxRequests bounds a file's requests: and -n of racelab run.
	MaxRequests = 10000
	// DefaultKeyPrefix starts every fresh key when the file names none.
	DefaultKeyPrefix = "race"
)

// Error is what is wrong with a race file, where: it prints as
// FILE:LINE:COL: what is wrong, what would be right. It is a usage error
// (results.ErrUsage): nothing is sent for a file that has one.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Is makes every Error a usage error.
func (e *Error) Is(target error) bool { return target == results.ErrUsage }

// File is one race, parsed and checked: every template names a variable
// it may, and every CEL expression compiles to the type it must have.
type File struct {
	// Path is the file as it was named; SHA256 its content's hash.
	Path   string
	SHA256 string
	// Name is the race's name (race:), Title its one line.
	Name  string
	Title string
	// Requests is the burst's N: the counts of its kinds, or requests:.
	Requests int
	// KeyPrefix starts every trial's fresh key, and Key says what the
	// templates' {{key}} is made of.
	KeyPrefix string
	Key       KeySpec
	// Env lists the environment variables templates may read.
	Env []string
	// Databases names the databases its sql: steps read (databases:);
	// each target gives their URLs (--db).
	Databases []string
	// Setup, Burst and Readback are the requests, in order.
	Setup    []*Step
	Burst    []*Step
	Readback []*Step
	// Order, in a SQL race, is the fixed interleaving of its
	// transactions' steps (order:), nil for a barrier's; Cleanup are the
	// sql: statements that remove a trial's rows after its readback.
	Order   []sqlrace.OrderStep
	Cleanup []*Step
	// Rule is the hard rule; Soft, Damage, Counted and Severity are
	// optional.
	Rule     *expr.CEL
	Soft     *expr.CEL
	Damage   *expr.CEL
	Counted  *expr.CEL
	Severity *expr.CEL
	// Secret lists the variables of Env marked secret: a saved result
	// does not record their values.
	Secret []string

	// ShowSecrets shows the secrets (--show-secrets) that outputs and
	// errors otherwise show as Hidden.
	ShowSecrets bool

	// burstCaptures are the setup answers the burst's requests send:
	// only the process that ran the setup knows them.
	burstCaptures []string
	// secretCaptures are the captures that never show (Capture.Secret).
	secretCaptures []string
}

// Step is one request of a race file.
type Step struct {
	Line, Col int
	Method    string
	Path      *expr.Template
	Headers   []Header
	// Body is the request's body: JSON (json:) or text (body:), nil for
	// none.
	Body *expr.Body
	// As names the answer's JSON (setup and readback).
	As string
	// Repeat is how many times a setup step is sent (repeat:), 0 for
	// once; PerRequest repeats it once per burst request instead.
	Repeat     int
	PerRequest bool
	// Captures take values from the answer (capture:).
	Captures []*Capture
	// Kind names a burst entry and Count is how many of the burst it
	// sends; Allowed and Refused judge each of its answers.
	Kind    string
	Count   int
	Allowed *expr.CEL
	Refused *expr.CEL
	// SQL and Exec, in a readback, read the store itself instead of
	// sending a request (store.go); SQL, in a SQL race's setup, writes
	// it.
	SQL  *SQLRead
	Exec *ExecRead
	// Tx, in a SQL race's burst, is the transaction it runs
	// (transaction.go).
	Tx *Transaction
}

// Header is one header of a step.
type Header struct {
	Name  string
	Value *expr.Template
	// Secret says its value never shows (secret: true, or a name such
	// as Authorization that always holds one).
	Secret bool
}

// Load reads and checks the race file at path, reading at most
// MaxFileBytes: a larger file is refused by its size unread, and one that
// never ends (/dev/zero) at the first byte past it. A file that waits (a
// FIFO no one writes to) stops waiting when ctx is done, with ctx's error,
// not a usage error: the command was interrupted.
func Load(ctx context.Context, path string) (*File, error) {
	if err := regular(path); err != nil {
		return nil, err
	}
	data, err := readfile.ReadAll(ctx, path, MaxFileBytes)
	var tl *readfile.TooLargeError
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil, err
	case errors.As(err, &tl):
		return nil, &Error{File: path, Msg: fmt.Sprintf("over %d KiB; a race file is one race, a page of YAML", MaxFileBytes>>10)}
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the race file: %v", strings.TrimPrefix(err.Error(), path+": "))}
	}
	return Parse(path, data)
}

// Parse reads and checks a race file's content; path names it in errors.
func Parse(path string, data []byte) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: path, Msg: fmt.Sprintf("over %d KiB; a race file is one race, a page of YAML", MaxFileBytes>>10)}
	}
	data, err := text(path, data)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	p := &parser{path: path, f: &File{Path: path, SHA256: hex.EncodeToString(sum[:]), KeyPrefix: DefaultKeyPrefix}}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, &Error{File: path, Line: 1, Col: 1, Msg: "empty; want a race: name, a burst:, and a rule: (racelab race init writes a starter)"}
		}
		return nil, yamlError(path, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return nil, p.at(&more, "a second YAML document; want one race per file")
	}
	if err := p.file(doc.Content[0]); err != nil {
		return nil, err
	}
	return p.f, nil
}

// yamlLine finds "line N:" in yaml.v3's messages, which carry no column.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlError(path string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: path, Line: line, Col: 1, Msg: "not YAML: " + m[2]}
	}
	return &Error{File: path, Line: 1, Col: 1, Msg: "not YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

type parser struct {
	path string
	f    *File
	// captures are the as: and capture: names of the steps read so far,
	// which later templates may read, and lists those of repeated steps;
	// names every as: and capture: name so far.
	captures []string
	lists    []string
	names    []string
	// repeating says the step being read repeats: {{n}} is its own.
	repeating bool
	// sqlRace says the burst holds transaction: entries (transaction.go).
	sqlRace bool
}

func (p *parser) at(n *yaml.Node, format string, args ...any) error {
	return &Error{File: p.path, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)}
}

// topKeys are a race file's keys, in the order a file gives them.
var topKeys = []string{"race", "title", "requests", "key", "env", "databases", "setup", "burst", "order", "readback", "cleanup", "counted", "rule", "soft", "damage", "severity"}

func (p *parser) file(root *yaml.Node) error {
	if root.Kind != yaml.MappingNode {
		return p.at(root, "a race file is a mapping (race:, burst:, rule:, …), not %s", nodeKind(root))
	}
	fields, err := p.mapping(root, topKeys, "a race file")
	if err != nil {
		return err
	}
	f := p.f
	if f.Name, err = p.str(fields, root, "race", true); err != nil {
		return err
	}
	if !raceName.MatchString(f.Name) {
		return p.at(fields["race"], "race: %q; want a short name of letters, digits and dashes, such as coupon-once", f.Name)
	}
	if f.Title, err = p.str(fields, root, "title", false); err != nil {
		return err
	}
	if n := fields["key"]; n != nil && n.Kind == yaml.MappingNode {
		if err := p.keySpec(n); err != nil {
			return err
		}
	} else if n != nil {
		if f.KeyPrefix, err = p.str(fields, root, "key", false); err != nil {
			return err
		}
		if !raceName.MatchString(f.KeyPrefix) {
			return p.at(n, "key: %q; want a short prefix of letters, digits and dashes for the fresh keys, such as account", f.KeyPrefix)
		}
	}
	if n := fields["env"]; n != nil {
		if n.Kind != yaml.SequenceNode {
			return p.at(n, "env: want a list of environment variable names, such as [API_TOKEN]")
		}
		for _, e := range n.Content {
			name, secret, err := p.envEntry(e)
			if err != nil {
				return err
			}
			f.Env = append(f.Env, name)
			if secret {
				f.Secret = append(f.Secret, name)
			}
		}
	}
	if err := p.databases(fields["databases"]); err != nil {
		return err
	}
	p.sqlRace = transactions(fields["burst"])
	if f.Setup, err = p.steps(fields, root, "setup", false); err != nil {
		return err
	}
	if f.Burst, err = p.steps(fields, root, "burst", true); err != nil {
		return err
	}
	if f.Readback, err = p.steps(fields, root, "readback", false); err != nil {
		return err
	}
	if err := p.requests(fields); err != nil {
		return err
	}
	if err := p.sqlRaceEnd(fields); err != nil {
		return err
	}
	return p.rules(fields, root)
}

var (
	raceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	asName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// requests settles N: one burst entry without count: sends requests:
// (DefaultRequests) copies; several entries each say their count:, and N
// is their sum, which requests:, when given, must agree with.
func (p *parser) requests(fields map[string]*yaml.Node) error {
	f := p.f
	n := fields["requests"]
	given := 0
	if n != nil {
		v, err := strconv.Atoi(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil || v < 1 || v > MaxRequests {
			return p.at(n, "requests: %q; want a whole number from 1 to %d", n.Value, MaxRequests)
		}
		given = v
	}
	if p.sqlRace && len(f.Burst) > 1 {
		// Several transactions, each different, run once each unless
		// they say count: (Hermitage's two sessions).
		for _, s := range f.Burst {
			s.Count = max(s.Count, 1)
		}
	}
	sum, counted := 0, 0
	for _, s := range f.Burst {
		if s.Count > 0 {
			sum += s.Count
			counted++
		}
	}
	switch {
	case counted == 0 && len(f.Burst) == 1:
		f.Requests = given
		if given == 0 {
			f.Requests = DefaultRequests
		}
		f.Burst[0].Count = f.Requests
	case counted < len(f.Burst):
		for _, s := range f.Burst {
			if s.Count == 0 {
				return &Error{File: p.path, Line: s.Line, Col: s.Col, Msg: "a burst of several kinds gives each its count:; want count: N here"}
			}
		}
	case sum > MaxRequests:
		return &Error{File: p.path, Line: f.Burst[0].Line, Col: f.Burst[0].Col, Msg: fmt.Sprintf("the counts add up to %d requests; want at most %d", sum, MaxRequests)}
	case given != 0 && given != sum:
		return p.at(n, "requests: %d, but the burst's counts add up to %d; drop requests: or make them agree", given, sum)
	default:
		f.Requests = sum
	}
	return nil
}

// mapping reads a mapping's keys, refusing any not in known and any given
// twice.
func (p *parser) mapping(n *yaml.Node, known []string, what string) (map[string]*yaml.Node, error) {
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.at(k, "a key of %s is %s; want one of %s", what, nodeKind(k), strings.Join(known, ", "))
		}
		if !slices.Contains(known, k.Value) {
			return nil, p.at(k, "unknown key %q in %s; want one of %s", k.Value, what, strings.Join(known, ", "))
		}
		if _, twice := out[k.Value]; twice {
			return nil, p.at(k, "%s: given twice in %s; give it once", k.Value, what)
		}
		out[k.Value] = v
	}
	return out, nil
}

// str is a scalar field's text; a required one missing is an error at
// the mapping.
func (p *parser) str(fields map[string]*yaml.Node, parent *yaml.Node, key string, required bool) (string, error) {
	n := fields[key]
	if n == nil {
		if required {
			return "", p.at(parent, "no %s: here; want %s", key, keyHelp[key])
		}
		return "", nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.at(n, "%s: is %s; want %s", key, nodeKind(n), keyHelp[key])
	}
	return n.Value, nil
}

// keyHelp says what each key wants, for the errors.
var keyHelp = map[string]string{
	"race":     "the race's name, such as race: coupon-once",
	"title":    "the race in one line",
	"key":      "a prefix for the fresh keys",
	"burst":    "a list of the raced requests, such as - request: POST /coupons/SAVE20/redeem",
	"rule":     "the hard rule in CEL, such as rule: allowed <= 1",
	"soft":     "a soft rule in CEL",
	"damage":   "a CEL string saying how far a broken trial strayed",
	"counted":  "a CEL whole number: what the store counted, for the table",
	"severity": "a CEL number ranking broken trials, the highest the worst, such as severity: account.discounts - 1",
	"request":  "METHOD /PATH, such as request: POST /coupons/{{key}}/redeem",
	"as":       "a name for the answer's JSON, such as as: account",
	"kind":     "a name for this kind of burst request",
	"body":     "the body as text",
	"allowed":  "a CEL condition on this answer, such as allowed: status == 200",
	"refused":  "a CEL condition on this answer, such as refused: status == 409",
	"count":    "how many of the burst this entry sends",
	"setup":    "a list of requests",
	"readback": "a list of requests",
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "empty"
	}
	return fmt.Sprintf("%q", n.Value)
}

// stepKeys are the keys of a request, by the list it is in.
var stepKeys = map[string][]string{
	"setup":    {"request", "headers", "json", "form", "body", "as", "repeat", "capture"},
	"burst":    {"request", "headers", "json", "form", "body", "kind", "count", "allowed", "refused"},
	"readback": {"request", "headers", "json", "form", "body", "as", "capture"},
}

func (p *parser) steps(fields map[string]*yaml.Node, parent *yaml.Node, list string, required bool) ([]*Step, error) {
	n := fields[list]
	if n == nil {
		if required {
			return nil, p.at(parent, "no %s: here; want %s", list, keyHelp[list])
		}
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode || required && len(n.Content) == 0 {
		return nil, p.at(n, "%s: is %s; want a list of requests, each - request: METHOD /PATH", list, nodeKind(n))
	}
	if len(n.Content) > MaxSteps {
		return nil, p.at(n.Content[MaxSteps], "%s: more than %d requests; a race file is one race", list, MaxSteps)
	}
	var out []*Step
	for _, item := range n.Content {
		s, err := p.step(item, list)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Methods are the request methods a race file may send.
var Methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

func (p *parser) step(n *yaml.Node, list string) (*Step, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.at(n, "a %s entry is %s; want a mapping such as - request: GET /accounts/{{key}}", list, nodeKind(n))
	}
	if list == "readback" && (hasKey(n, "sql") || hasKey(n, "exec")) {
		return p.storeStep(n, list)
	}
	if s, ok, err := p.sqlStep(n, list); ok {
		return s, err
	}
	fields, err := p.mapping(n, stepKeys[list], "a "+list+" request")
	if err != nil {
		return nil, err
	}
	s := &Step{Line: n.Line, Col: n.Column}
	if err := p.repeat(fields, s); err != nil {
		return nil, err
	}
	line, err := p.str(fields, n, "request", true)
	if err != nil {
		return nil, err
	}
	rn := fields["request"]
	method, path, ok := strings.Cut(strings.TrimSpace(line), " ")
	path = strings.TrimSpace(path)
	if !ok || !slices.Contains(Methods, method) || !strings.HasPrefix(path, "/") {
		return nil, p.at(rn, "request: %q; want METHOD /PATH with METHOD one of %s, such as POST /coupons/{{key}}/redeem (the target gives the host)", line, strings.Join(Methods, ", "))
	}
	s.Method = method
	if s.Path, err = p.template(rn, path, list, strings.Index(rn.Value, path)); err != nil {
		return nil, err
	}
	s.Kind = method + " " + path
	if h := fields["headers"]; h != nil {
		if h.Kind != yaml.MappingNode {
			return nil, p.at(h, "headers: is %s; want a mapping such as {Authorization: \"Bearer {{env.API_TOKEN}}\"}", nodeKind(h))
		}
		for i := 0; i+1 < len(h.Content); i += 2 {
			k, v := h.Content[i], h.Content[i+1]
			if k.Kind != yaml.ScalarNode || !headerName.MatchString(k.Value) {
				return nil, p.at(k, "header name %q; want letters, digits and dashes, such as Authorization", k.Value)
			}
			hd, err := p.header(k, v, list)
			if err != nil {
				return nil, err
			}
			s.Headers = append(s.Headers, hd)
		}
	}
	jn, bn, fn := fields["json"], fields["body"], fields["form"]
	switch {
	case jn != nil && bn != nil:
		return nil, p.at(bn, "body: and json: both given; want one of them")
	case fn != nil && (jn != nil || bn != nil):
		return nil, p.at(fn, "form: and %s given; want one body", map[bool]string{true: "json:", false: "body:"}[jn != nil])
	case fn != nil:
		if s.Body, err = p.form(fn, list); err != nil {
			return nil, err
		}
	case jn != nil:
		v, err := p.jsonValue(jn, list)
		if err != nil {
			return nil, err
		}
		s.Body = &expr.Body{JSON: v}
	case bn != nil:
		text, err := p.str(fields, n, "body", false)
		if err != nil {
			return nil, err
		}
		t, err := p.template(bn, text, list, 0)
		if err != nil {
			return nil, err
		}
		s.Body = &expr.Body{Text: t}
	}
	if list != "burst" {
		if s.As, err = p.str(fields, n, "as", false); err != nil {
			return nil, err
		}
		if err := p.checkAs(fields["as"], s.As); err != nil {
			return nil, err
		}
		if err := p.capture(fields["capture"], s); err != nil {
			return nil, err
		}
		if list == "readback" && s.As == "" && len(s.Captures) == 0 {
			return nil, p.at(n, "no as: here; want %s, or a capture:", keyHelp["as"])
		}
		p.took(s, s.As)
		for _, c := range s.Captures {
			p.took(s, c.Name)
		}
		return s, nil
	}
	if err := p.kindAndCount(fields, n, s, "redeem"); err != nil {
		return nil, err
	}
	if s.Allowed, err = p.expr(fields, "allowed", answerEnv, boolType, defaultAllowed); err != nil {
		return nil, err
	}
	if s.Refused, err = p.expr(fields, "refused", answerEnv, boolType, "false"); err != nil {
		return nil, err
	}
	return s, nil
}

// defaultAllowed is a burst answer's allowed: when the file says none.
const defaultAllowed = "status >= 200 && status <= 299"

var headerName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

// reserved are the names a rule already has: no answer may take them.
var reserved = []string{"allowed", "refused", "errors", "requests", "answers", "key", "i", "trial", "uuid", "env"}

func (p *parser) checkAs(n *yaml.Node, name string) error {
	switch {
	case n == nil:
		return nil
	case !asName.MatchString(name):
		return p.at(n, "as: %q; want a name of letters, digits and _, such as account", name)
	case slices.Contains(reserved, name):
		return p.at(n, "as: %q is a name the rule already has; want another, such as %s_state", name, name)
	case slices.Contains(p.names, name):
		return p.at(n, "as: %q names two answers; give each its own name", name)
	}
	p.names = append(p.names, name)
	return nil
}

// template parses a template, s at byte base of node n's value, and
// checks every name it reads against what a request of list may read.
func (p *parser) template(n *yaml.Node, s, list string, base int) (*expr.Template, error) {
	t, off, err := expr.ParseTemplate(s)
	if err != nil {
		return nil, p.atOffset(n, base+off, "%v", err)
	}
	for _, h := range t.Holes() {
		if err := p.checkHole(n, s, list, base, h); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// atOffset is an error at byte off of a scalar's value, on its first line.
func (p *parser) atOffset(n *yaml.Node, off int, format string, args ...any) error {
	col := n.Column
	if off > 0 && !strings.Contains(n.Value[:min(off, len(n.Value))], "\n") && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		col += off
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			col++
		}
	}
	return &Error{File: p.path, Line: n.Line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// jsonValue reads a JSON value written in YAML: its keys and strings
// are templates.
func (p *parser) jsonValue(n *yaml.Node, list string) (*expr.JSONValue, error) {
	switch n.Kind {
	case yaml.MappingNode:
		var keys []*expr.Template
		var vals []*expr.JSONValue
		var seen []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, p.at(k, "a JSON key is %s; want text", nodeKind(k))
			}
			if slices.Contains(seen, k.Value) {
				return nil, p.at(k, "JSON key %q given twice; give it once", k.Value)
			}
			seen = append(seen, k.Value)
			key, err := p.template(k, k.Value, list, 0)
			if err != nil {
				return nil, err
			}
			val, err := p.jsonValue(n.Content[i+1], list)
			if err != nil {
				return nil, err
			}
			keys, vals = append(keys, key), append(vals, val)
		}
		return expr.JSONObject(keys, vals), nil
	case yaml.SequenceNode:
		items := []*expr.JSONValue{}
		for _, item := range n.Content {
			val, err := p.jsonValue(item, list)
			if err != nil {
				return nil, err
			}
			items = append(items, val)
		}
		return expr.JSONList(items), nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return expr.JSONLiteral(json.RawMessage("null")), nil
		case "!!bool", "!!int", "!!float":
			var x any
			if err := n.Decode(&x); err != nil {
				return nil, p.at(n, "%v", err)
			}
			b, err := json.Marshal(x)
			if err != nil {
				return nil, p.at(n, "%q is not a JSON value; want a finite number, true, false, null or text", n.Value)
			}
			return expr.JSONLiteral(b), nil
		}
		t, err := p.template(n, n.Value, list, 0)
		if err != nil {
			return nil, err
		}
		return expr.JSONString(t), nil
	}
	return nil, p.at(n, "%s is not JSON; want a mapping, a list or a value", nodeKind(n))
}

// header is the step's headers for one request, its body's Content-Type
// first (its own headers may override it).
func (s *Step) header(v *expr.Vars) (http.Header, error) {
	h := http.Header{}
	if s.Body != nil {
		h.Set("Content-Type", s.Body.ContentType())
	}
	for _, x := range s.Headers {
		val, err := x.Value.Expand(v, nil)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", x.Name, err)
		}
		h.Set(x.Name, val)
	}
	return h, nil
}

// kindAndCount reads a burst entry's kind: and count:, an HTTP request's
// or a transaction's alike; example is a kind the message offers.
func (p *parser) kindAndCount(fields map[string]*yaml.Node, n *yaml.Node, s *Step, example string) error {
	if k := fields["kind"]; k != nil {
		var err error
		if s.Kind, err = p.str(fields, n, "kind", false); err != nil {
			return err
		}
		if !raceName.MatchString(s.Kind) {
			return p.at(k, "kind: %q; want a short name, such as %s", s.Kind, example)
		}
	}
	if c := fields["count"]; c != nil {
		v, err := strconv.Atoi(c.Value)
		if c.Kind != yaml.ScalarNode || err != nil || v < 1 || v > MaxRequests {
			return p.at(c, "count: %q; want a whole number from 1 to %d", c.Value, MaxRequests)
		}
		s.Count = v
	}
	return nil
}
