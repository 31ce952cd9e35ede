package racefile

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/racelab/racelab/scenarios/racefile/expr"
	"golang.org/x/sync/errgroup"
	"gopkg.in/yaml.v3"
)

// Many users at once: a setup step with repeat: is sent once per
// repetition, its as: and captures becoming lists that the burst's
// requests read with an index hole ({{sid[i]}}, each its own).
const (
	// MaxRepeat bounds repeat:, as MaxRequests bounds the burst.
	MaxRepeat = 10000
	// RepeatInFlight is how many repetitions of a step are sent at once:
	// enough that ten thousand logins take seconds, few enough that a
	// setup is not itself a load test of the service.
	RepeatInFlight = 16
)

// repeat reads a setup step's repeat:, a number or "requests" (once per
// burst request), and says whether the step being read repeats.
func (p *parser) repeat(fields map[string]*yaml.Node, s *Step) error {
	p.repeating = false
	n := fields["repeat"]
	if n == nil {
		return nil
	}
	v, err := strconv.Atoi(n.Value)
	switch {
	case n.Kind == yaml.ScalarNode && n.Value == "requests":
		s.PerRequest = true
	case n.Kind != yaml.ScalarNode || err != nil || v < 1 || v > MaxRepeat:
		return p.at(n, "repeat: %q; want a whole number from 1 to %d, or requests (once per burst request)", n.Value, MaxRepeat)
	default:
		s.Repeat = v
	}
	p.repeating = true
	return nil
}

// repeats says the step is sent more than once, its names lists.
func (s *Step) repeats() bool { return s.Repeat > 0 || s.PerRequest }

// times is how many times a repeated step is sent in a burst of n.
func (s *Step) times(n int) int {
	if s.PerRequest {
		return n
	}
	return s.Repeat
}

// took records a name a step gives (as: or capture:): later templates
// may read it, as a list when the step repeats.
func (p *parser) took(s *Step, name string) {
	if name == "" {
		return
	}
	p.captures = append(p.captures, name)
	if s.repeats() {
		p.lists = append(p.lists, name)
	}
}

// checkHole checks that a request of list may read hole h of template
// s, at byte base of node n's value.
func (p *parser) checkHole(n *yaml.Node, s, list string, base int, h expr.Hole) error {
	name := h.Name()
	at := base + max(strings.Index(s, "{{"+name), strings.Index(s, "{{"), 0)
	root, field, _ := strings.Cut(strings.Join(h.Ref, "."), ".")
	isList := slices.Contains(p.lists, root)
	switch {
	case root == "key" || root == "trial" || root == "uuid":
	case list == "exec" && (name == "target.name" || name == "target.url"):
	case root == "i":
		if list != "burst" {
			return p.atOffset(n, at, "{{i}} in a %s request; only a burst request has an index", list)
		}
	case root == "n":
		if !p.repeating {
			return p.atOffset(n, at, "{{n}} in a step that does not repeat; want repeat: N or repeat: requests on it")
		}
	case root == "env":
		if !slices.Contains(p.f.Env, field) {
			return p.atOffset(n, at, "{{%s}} reads an environment variable the file does not declare; want env: [%s] at the top", name, field)
		}
	case !slices.Contains(p.captures, root):
		known := append([]string{"key", "i", "trial", "uuid", "env.NAME"}, p.captures...)
		if p.repeating {
			known = append(known, "n")
		}
		return p.atOffset(n, at, "{{%s}} names no variable; want one of %s", name, strings.Join(known, ", "))
	case h.Index != "" && !isList:
		return p.atOffset(n, at, "{{%s}}: %s is one value, not a list (its step has no repeat:); want {{%s}}", name, root, strings.Replace(name, "["+h.Index+"]", "", 1))
	case h.Index == "i" && list != "burst":
		return p.atOffset(n, at, "{{%s}} in a %s request; only a burst request has an index: want [n] in a repeated step or [0]", name, list)
	case h.Index == "n" && !p.repeating:
		return p.atOffset(n, at, "{{%s}} in a step that does not repeat; want [i] in the burst, or repeat: on this step", name)
	case isList && h.Index == "" && len(h.Ref) == 1:
		return p.atOffset(n, at, "{{%s}} is a list, one value per repetition of its step; want {{%s[i]}} in the burst or {{%s[n]}} in a repeated step", name, root, root)
	}
	if list == "burst" && slices.Contains(p.captures, root) && !slices.Contains(p.f.burstCaptures, root) {
		p.f.burstCaptures = append(p.f.burstCaptures, root)
	}
	return nil
}

// own is burst request i's index within its kind, which [i] reads: the
// kinds' counts in order, over again when -n asks for more, as kindOf.
func (f *File) own(i int) int {
	round, j := i/f.Requests, i%f.Requests
	for _, s := range f.Burst {
		if j < s.Count {
			return round*s.Count + j
		}
		j -= s.Count
	}
	return i
}

// setupStep sends one setup step and keeps what it took: once, or
// repeated with at most RepeatInFlight repetitions in flight, each of
// which must answer 2xx. A repeated step's names become lists, element n
// from repetition n.
func (p *player) setupStep(ctx context.Context, s *Step, st *trialState) error {
	if s.SQL != nil {
		return p.sqlSetup(ctx, s, st)
	}
	if !s.repeats() {
		took, err := p.call(ctx, s, st, st.vars)
		if err != nil {
			return err
		}
		for name, v := range took {
			st.vars.Captures[name] = v
		}
		return nil
	}
	times := s.times(p.burstN())
	took := make([]map[string]any, times)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(RepeatInFlight)
	for n := range times {
		g.Go(func() error {
			v := st.vars
			v.N = n
			var err error
			if took[n], err = p.call(gctx, s, st, v); err != nil {
				return fmt.Errorf("repetition %d of %d: %w", n, times, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, name := range s.names() {
		list := make([]any, times)
		for n := range took {
			list[n] = took[n][name]
		}
		st.vars.Captures[name] = list
	}
	return nil
}

// names are the names a step gives: its as:, then its captures.
func (s *Step) names() []string {
	var out []string
	if s.As != "" {
		out = append(out, s.As)
	}
	for _, c := range s.Captures {
		out = append(out, c.Name)
	}
	return out
}

// burstN is the burst's N as the run plays it: -n, or the file's.
func (p *player) burstN() int {
	if n := p.n.Load(); n > 0 {
		return int(n)
	}
	return p.f.Requests
}
