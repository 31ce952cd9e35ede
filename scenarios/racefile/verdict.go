package racefile

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/scenarios/results"
)

// maxWays bounds the ways a trial's errored requests are weighed answer by
// answer (2^k for k errors, for a rule that reads the answers): past it
// the trial is left inconclusive, since no break can be proven cheaply.
const maxWays = 1 << 10

// envEntry reads one entry of env:: a name, or {name: NAME, secret: true}
// for a value a saved result must not record.
func (p *parser) envEntry(e *yaml.Node) (name string, secret bool, err error) {
	if e.Kind == yaml.MappingNode {
		fields, err := p.mapping(e, []string{"name", "secret"}, "an env: entry")
		if err != nil {
			return "", false, err
		}
		if n := fields["name"]; n != nil {
			e = n
		}
		if s := fields["secret"]; s != nil {
			if s.Kind != yaml.ScalarNode || (s.Value != "true" && s.Value != "false") {
				return "", false, p.at(s, "env: secret: is %q; want true or false", s.Value)
			}
			secret = s.Value == "true"
		}
	}
	if e.Kind != yaml.ScalarNode || !envName.MatchString(e.Value) {
		return "", false, p.at(e, "env: %q is not an environment variable name; want letters, digits and _, or {name: NAME, secret: true}", e.Value)
	}
	return e.Value, secret, nil
}

// stepError is a setup or readback step's failure: Error says it with the
// trial's own values, cause without them (results.Readback.Cause).
type stepError struct {
	msg, cause string
}

func (e *stepError) Error() string { return e.msg }

// causeOf is the cause of a step's error: its own when it is a stepError.
func causeOf(s *Step, err error) string {
	if se, ok := err.(*stepError); ok {
		return se.cause
	}
	if s.Path == nil { // a sql: or exec: step: no request to show
		return err.Error()
	}
	return fmt.Sprintf("%s %s: %v", s.Method, s.Path.Shape(), err)
}

// statusWords is "404 Not Found, text/html": an answer's status and the
// type of its content.
func statusWords(status int, ctype string) string {
	w := fmt.Sprintf("%d %s", status, http.StatusText(status))
	if ctype == "" {
		return w + ", no content type"
	}
	if media, _, ok := strings.Cut(ctype, ";"); ok {
		ctype = media
	}
	return w + ", " + strings.TrimSpace(ctype)
}

// fail leaves the trial unjudged for the reason err, counted under cause.
func fail(rb *results.Readback, err, cause string) {
	rb.Error, rb.Cause = err, cause
}

// ways are the rule's variables for every way the trial's errored
// requests could have gone, each taken as allowed or as refused: with k
// errors, k+1 ways for a rule over the counts, 2^k for one that reads
// the answers. Without errors, vars alone. ok is false when there are
// too many ways to weigh.
func (f *File) ways(vars map[string]any, t *results.Trial) (out []map[string]any, ok bool) {
	var errored []int
	answers, _ := vars["answers"].([]any)
	for i, a := range answers {
		if m, isMap := a.(map[string]any); isMap && m["allowed"] == false && m["refused"] == false {
			errored = append(errored, i)
		}
	}
	k := int(vars["errors"].(int64))
	if k == 0 {
		return []map[string]any{vars}, true
	}
	allowed, refused := vars["allowed"].(int64), vars["refused"].(int64)
	way := func(asAllowed func(j int) bool) map[string]any {
		w := make(map[string]any, len(vars))
		for name, v := range vars {
			w[name] = v
		}
		as := int64(0)
		list := append([]any(nil), answers...)
		for j, i := range errored {
			a := map[string]any{}
			for name, v := range list[i].(map[string]any) {
				a[name] = v
			}
			a["allowed"], a["refused"] = asAllowed(j), !asAllowed(j)
			list[i] = a
		}
		for j := range k {
			if asAllowed(j) {
				as++
			}
		}
		w["answers"] = list
		w["allowed"], w["refused"], w["errors"] = allowed+as, refused+int64(k)-as, int64(0)
		return w
	}
	if !f.readsAnswers() || len(errored) != k {
		// Over the counts only the number taken as allowed matters: the
		// first j of them.
		for j := 0; j <= k; j++ {
			out = append(out, way(func(e int) bool { return e < j }))
		}
		return out, true
	}
	if k >= 63 || 1<<k > maxWays {
		return nil, false
	}
	for m := 0; m < 1<<k; m++ {
		out = append(out, way(func(e int) bool { return m&(1<<e) != 0 }))
	}
	return out, true
}

// readsAnswers says whether some rule judging a trial reads its answers.
func (f *File) readsAnswers() bool {
	return f.Rule.ReadsAnswers() || f.Severity != nil && f.Severity.ReadsAnswers()
}

// severity is how badly a broken trial broke, on one way's variables: the
// file's severity:, else counted - allowed when the file counts, else 1.
func (f *File) severity(vars map[string]any, counted int64) (float64, error) {
	switch {
	case f.Severity != nil:
		v, err := f.Severity.Eval(vars)
		if err != nil {
			return 0, fmt.Errorf("severity: %w", err)
		}
		switch n := v.(type) {
		case int64:
			return float64(n), nil
		case uint64:
			return float64(n), nil
		case float64:
			if math.IsNaN(n) {
				return 0, fmt.Errorf("severity: %s is NaN, not a number to rank by", f.Severity.Src)
			}
			return n, nil
		}
		return 0, fmt.Errorf("severity: %s is %s, not a number", f.Severity.Src, expr.JSONKind(v))
	case f.Counted != nil:
		return float64(counted - vars["allowed"].(int64)), nil
	}
	return 1, nil
}

// erroredCause is the cause of a trial whose errored requests left the
// rule undecided: how the first of them failed, without the trial's own
// values.
func (f *File) erroredCause(t *results.Trial, how string) string {
	return fmt.Sprintf("errored requests (first: %s): %s", f.firstFailure(t), how)
}

// firstFailure says how the trial's first errored request failed.
func (f *File) firstFailure(t *results.Trial) string {
	for i, ra := range t.Readback.Answers {
		errored := f.outcome(ra) == results.Errored
		if i < len(t.Requests) {
			errored = t.Requests[i].Outcome == results.Errored
		}
		switch {
		case !errored:
		case ra.Status >= 300:
			return fmt.Sprintf("%s answered %s", ra.Kind, statusWords(ra.Status, ra.Headers["content-type"]))
		case ra.Status != 0:
			return fmt.Sprintf("%s answered %d, neither allowed nor refused", ra.Kind, ra.Status)
		case i < len(t.Requests) && t.Requests[i].Error != "":
			return fmt.Sprintf("%s: %s", ra.Kind, t.Requests[i].Error)
		default:
			return ra.Kind + ": no answer"
		}
	}
	return "a request failed"
}

// record names the file in a result: its path and hash, and the values of
// its env: variables but the secret ones (secretEnv), so that the result is judged
// again without the run's environment.
func (f *File) record(env map[string]string) *results.RaceFile {
	secret := f.secretEnv()
	rf := &results.RaceFile{Path: f.Path, SHA256: f.SHA256, Uncounted: f.Counted == nil, Secret: secret}
	for _, name := range f.Env {
		if v, ok := env[name]; ok && !slices.Contains(secret, name) {
			if rf.Env == nil {
				rf.Env = map[string]string{}
			}
			rf.Env[name] = v
		}
	}
	return rf
}
