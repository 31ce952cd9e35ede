package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// The flags several commands share are declared here, once each: the name,
// the shorthand, the type and the default live in one function, and a
// command adds only what the flag means for it. The plans' checks live in
// the domain (engine.Plan.Validate, load.LoadPlan.Validate), which names
// fields; flagOf is the one place where a field becomes a flag.

// fieldFlags names, for each field of the plans, the flag that sets it.
// A story's knob is its own flag (--stock) and needs no line here.
var fieldFlags = map[string]string{
	"Targets":        "-t",
	"Expect":         "--expect",
	"Requests":       "--requests",
	"Trials":         "--trials",
	"Timeout":        "--timeout",
	"Gap":            "--gap",
	"Sequential":     "--sequential",
	"KeyChars":       "--key-chars",
	"Confidence":     "--confidence",
	"MaxRate":        "--max-rate",
	"MaxTrials":      "--max-trials",
	"HistoryTimeout": "--history-timeout",
	"HistoryHTML":    "--history-html",
	"MaxSpread":      "--max-spread",
	"Shard":          "--shard",
	"RunID":          "--run-id",
	"StartAt":        "--start-at",
	"RealClock":      "--clock real",
	"Wait":           "--wait",
	"Period":         "--period",
	"Duration":       "--duration",
	"Concurrency":    "--concurrency",
	"MaxInFlight":    "--max-in-flight",
	"Keys":           "--keys",
	"Samples":        "--samples",
	"Stages":         "--stages",
	"KeyDist":        "--key-dist",
	"Schedule":       "--rate",
	"Fixed":          "--fixed",
	"Background":     "--background",
	"BackgroundKeys": "--background-keys",
	// Settings a report advises (report.Options.Say) but no plan holds.
	"KeepAll":  "--keep-all",
	"Timeline": "--timeline",
	"Wide":     "--wide",
	// Settings of the commands' own (report.ParseOutputs, shards.ExpandDirs,
	// engine.Explainer).
	"Output":   "-o",
	"ShardDir": "--shard-dir",
	"Target":   "--target",
	// racelab serve's server (guarded.Server)
	"MaxConns": "--max-conns",
	"Public":   "--public",
	"Token":    "--token",
}

// flagOf is the flag that sets a plan's field.
func flagOf(field string) string {
	if f, ok := fieldFlags[field]; ok {
		return f
	}
	return "--" + field // a story's knob
}

// reportOptions are the options of a report written to a width: its
// advice names flags, and saved says the result is (or was) kept as JSON,
// so that what the JSON keeps is worth a line.
func (s Streams) reportOptions(width int, saved bool) report.Options {
	return report.Options{NoColor: s.NoColor, Width: width, Say: flagOf, Saved: saved}
}

// sayFlags writes err as the command line reads it: every field a
// *usage.FieldError in it names is said as its flag.
func sayFlags(err error) string {
	var found []*usage.FieldError
	var walk func(error)
	walk = func(err error) {
		for err != nil {
			if fe, ok := err.(*usage.FieldError); ok && !slices.Contains(found, fe) {
				found = append(found, fe)
			}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					walk(e)
				}
				return
			}
			err = errors.Unwrap(err)
		}
	}
	walk(err)
	// Each field error's text is marked first and said after, so that a
	// flag's name never meets a second replacement.
	msg := err.Error()
	for i, fe := range found {
		msg = strings.Replace(msg, fe.Error(), fmt.Sprintf("\x00%d\x00", i), 1)
	}
	for i, fe := range found {
		msg = strings.Replace(msg, fmt.Sprintf("\x00%d\x00", i), fe.Say(flagOf), 1)
	}
	return msg
}

// firstError is the first of a plan's errors, or nil: a command line is
// told one thing to fix at a time.
func firstError(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// explicitZero refuses a value given on the command line as zero for a
// field whose zero the plan reads as "the default": the user meant zero,
// and it is not a value the field takes. The words are the domain's.
func explicitZero(set func(string) bool, invalid func(field string, value any) *usage.FieldError, checks ...zeroCheck) error {
	for _, c := range checks {
		if c.zero && set != nil && set(strings.TrimPrefix(flagOf(c.field), "--")) {
			return invalid(c.field, c.value)
		}
	}
	return nil
}

type zeroCheck struct {
	field string
	value any
	zero  bool
}

func zeroIf(field string, value any, zero bool) zeroCheck { return zeroCheck{field, value, zero} }

// addTargets is -t: a target spec, or NAME=SPEC to name it in reports.
func addTargets(c *cobra.Command, dst *[]string, what string) {
	c.Flags().StringArrayVarP(dst, "target", "t", nil, what)
	_ = c.RegisterFlagCompletionFunc("target", completeTargets)
}

// targetsUsage is -t's help for a command that fires at targets.
const targetsUsage = "target spec STORE[:STRATEGY][?PARAMS] or URL, or NAME=SPEC to name it in reports;\n" +
	"repeatable (default: the story's line-up)"

// addExpect is --expect, one grammar for every command: WHAT for every
// target, NAME=WHAT for one (parseExpect).
func addExpect(c *cobra.Command, dst *[]string) {
	c.Flags().StringArrayVar(dst, "expect", nil, "what every target must do: auto (naive may break, others must hold), hold, breaks or race;\n"+
		"NAME=WHAT for one target, by the name given with -t NAME=SPEC or its spec (repeatable; default auto)")
	_ = c.RegisterFlagCompletionFunc("expect", cobra.FixedCompletions([]string{"auto", "hold", "breaks", "race"}, cobra.ShellCompDirectiveNoFileComp))
}

// addTimeout is --timeout, the time limit of each request.
func addTimeout(f *pflag.FlagSet, dst *time.Duration, what string) {
	f.DurationVar(dst, "timeout", engine.DefaultTimeout, what)
}

// addSeed is --seed; def is the command's own default.
func addSeed(f *pflag.FlagSet, dst *int64, def int64, what string) {
	f.Int64Var(dst, "seed", def, what)
}

// addRequests is -n, --requests.
func addRequests[N int | int64](f *pflag.FlagSet, dst *N, what string) {
	switch p := any(dst).(type) {
	case *int:
		f.IntVarP(p, "requests", "n", 0, what)
	case *int64:
		f.Int64VarP(p, "requests", "n", 0, what)
	}
}

// addQuiet is -q, --quiet.
func addQuiet(f *pflag.FlagSet, dst *bool, what string) {
	f.BoolVarP(dst, "quiet", "q", false, what)
}

// parseExpect reads --expect: one bare value for every target, and
// NAME=VALUE for one target each. The value is split at the last "=", so
// that a URL given as the name keeps its own.
func parseExpect(raw []string) (engine.Override, map[string]engine.Override, error) {
	all := engine.OverrideAuto
	var one map[string]engine.Override
	allSet := false
	for _, v := range raw {
		key, what, named := "", v, false
		if i := strings.LastIndex(v, "="); i >= 0 {
			key, what, named = v[:i], v[i+1:], true
		}
		ov, err := engine.ParseOverride(what)
		if err != nil || named && key == "" {
			return "", nil, usageError{fmt.Errorf("--expect %s: want auto, hold, breaks or race, or NAME=one of them for one target", v)}
		}
		switch {
		case !named && allSet:
			return "", nil, usageError{fmt.Errorf("--expect %s: a second expectation for every target; give one, and NAME=%s for single targets", v, what)}
		case !named:
			all, allSet = ov, true
		case hasKey(one, key):
			return "", nil, usageError{fmt.Errorf("--expect %s: %s already has an expectation", v, key)}
		default:
			if one == nil {
				one = map[string]engine.Override{}
			}
			one[key] = ov
		}
	}
	return all, one, nil
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

// knobFlags are the stories' own settings as flags (--stock, --rate, …),
// registered from what each story declares (engine.Knob): a story with a
// knob of its own adds its flag by saying so. Stories that share a knob's
// name share its flag; its help says what it means for each.
type knobFlags struct {
	values map[string]*knobValue
}

func (k *knobFlags) register(f *pflag.FlagSet) {
	k.values = map[string]*knobValue{}
	var order []string
	for _, sc := range scenarios.All() {
		for _, knob := range sc.Knobs {
			v, ok := k.values[knob.Name]
			if !ok {
				v = &knobValue{knob: knob}
				k.values[knob.Name] = v
				order = append(order, knob.Name)
			}
			v.usage = append(v.usage, [2]string{sc.Name, knob.Usage})
		}
	}
	for _, name := range order {
		v := k.values[name]
		fl := f.VarPF(v, name, "", v.help())
		if v.knob.Bool {
			fl.NoOptDefVal = "true"
		}
	}
}

// settings reads the knobs given into a Settings.
func (k *knobFlags) settings() (results.Settings, error) {
	var s results.Settings
	for _, v := range k.values {
		if v.given {
			if err := v.knob.Set(&s, v.raw); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

// knobValue is one knob's flag: the text given, read by the knob when the
// story is known.
type knobValue struct {
	knob  engine.Knob
	usage [][2]string // story, what the knob means for it
	raw   string
	given bool
}

func (v *knobValue) String() string { return v.raw }
func (v *knobValue) Set(s string) error {
	v.raw, v.given = s, true
	return nil
}

func (v *knobValue) Type() string {
	if v.knob.Bool {
		return "bool"
	}
	return "string"
}

// help is the flag's help: the story's words, each prefixed by its story
// when stories read it differently.
func (v *knobValue) help() string {
	same := true
	for _, u := range v.usage {
		same = same && u[1] == v.usage[0][1]
	}
	if same {
		var names []string
		for _, u := range v.usage {
			names = append(names, u[0])
		}
		return strings.Join(names, ", ") + ": " + v.usage[0][1]
	}
	var lines []string
	for _, u := range v.usage {
		lines = append(lines, u[0]+": "+u[1])
	}
	return strings.Join(lines, ";\n")
}

// takesOneStory makes c a command of one scenario, like run and load: it
// takes the scenario's name, completes it, and notes which flags were
// given before run.
func takesOneStory(c *cobra.Command, scenario *string, set *func(string) bool, run func(*cobra.Command) error) {
	c.Args = exactArgs(1, "one scenario ("+strings.Join(scenarios.Names(), ", ")+")")
	c.ValidArgsFunction = completeScenarios
	c.RunE = func(c *cobra.Command, args []string) error {
		*scenario, *set = args[0], c.Flags().Changed
		return run(c)
	}
}
