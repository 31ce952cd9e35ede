package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/racelab/racelab/internal/readfile"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
	"github.com/racelab/racelab/targets"
)

// Exit codes; see doc.go.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitRuleBroken  = 3
	exitInterrupted = 130
)

// Streams are where a command reads and writes. Data goes to Out; progress
// bars and notices go to Err, and only when Err is a terminal.
type Streams struct {
	In       io.Reader
	Out      io.Writer
	Err      io.Writer
	ErrIsTTY bool // progress bars only on a terminal
	NoColor  bool // NO_COLOR is set
	// Width is how many display columns a line written to Out may take:
	// tables leave out and fold columns to fit it. 0 means no limit.
	Width int
	// InIsTTY and OutIsTTY say whether In and Out are a terminal:
	// explain --step waits for Enter only when someone is there to press it.
	InIsTTY, OutIsTTY bool
}

// Stdio returns the process's own streams.
func Stdio() Streams {
	_, noColor := os.LookupEnv("NO_COLOR")
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrIsTTY: isTerminal(os.Stderr), NoColor: noColor,
		Width: outputWidth(os.Stdout, os.Getenv), InIsTTY: isTerminal(os.Stdin), OutIsTTY: isTerminal(os.Stdout)}
}

// pipeWidth is the width of output that goes to no terminal and whose
// reader set no COLUMNS: wide enough for most tables whole, narrow enough
// for a pager or a CI log.
const pipeWidth = 100

// outputWidth is the width tables written to out must fit: the terminal's
// own when out is one, else COLUMNS when it is set (shells set it but do
// not export it; a user who exports it means it), else pipeWidth.
func outputWidth(out *os.File, getenv func(string) string) int {
	if w, _, err := term.GetSize(int(out.Fd())); err == nil && w > 0 {
		return w
	}
	if c, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && c > 0 {
		return c
	}
	return pipeWidth
}

// of is s as the command c writes to it: tables fit no width under --wide.
func (s Streams) of(c *cobra.Command) Streams {
	if wide, err := c.Flags().GetBool("wide"); err == nil && wide {
		s.Width = 0
	}
	return s
}

// runner is how a command runs once its flags are read: runF, the tests'
// seam, when it is set, else the command's own run function with the
// context and the streams (the cli/cli habit: options in, no cobra).
func runner[O any](runF func(O) error, run func(context.Context, Streams, O) error, o O) func(context.Context, Streams) error {
	return func(ctx context.Context, s Streams) error {
		if runF != nil {
			return runF(o)
		}
		return run(ctx, s, o)
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Main runs racelab with args, looking targets up in cat, and returns the
// exit code. It is main without
// os.Exit, so tests run the whole command in-process.
func Main(ctx context.Context, args []string, s Streams, cat *targets.Catalog) int {
	root := newRootCmd(s, cat)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code := exitCode(err)
	if err != nil && !errors.Is(err, errSilent) {
		fmt.Fprintf(s.Err, "racelab: %s\n", sayFlags(err))
	}
	return code
}

// usageError marks an error as the user's to fix: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// verdictError carries a non-zero exit for a run that did its job but whose
// verdict fails: a rule broken, a failure to reach a target, an interrupt.
type verdictError struct {
	code int
	msg  string
}

func (e verdictError) Error() string { return e.msg }

// errSilent is an error already reported in full; Main prints nothing more.
var errSilent = errors.New("already reported")

// exitCode maps an error to its exit code, in one place.
func exitCode(err error) int {
	var ve verdictError
	var ue usageError
	var unknown *targets.UnknownNameError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ve):
		return ve.code
	case errors.As(err, &ue), errors.As(err, &unknown),
		errors.Is(err, targets.ErrBadSpec), errors.Is(err, results.ErrUsage):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	default:
		return exitFailure
	}
}

// verdict turns a finished run or load into its exit code: interrupted
// first, then a rule that broke where it had to hold (a proven break
// outranks anything that could not be judged), then a target racelab
// could not run or could not judge. The one stderr line names the first
// cause, so that it reads on its own when the report went to a file.
func verdict(interrupted bool, fs []results.Shortfall) error {
	if interrupted {
		return verdictError{exitInterrupted, "interrupted: the report above is partial"}
	}
	return shortfallError(fs)
}

// shortfallError is the exit of a run with these shortfalls, nil when
// there are none.
func shortfallError(fs []results.Shortfall) error {
	if len(fs) == 0 {
		return nil
	}
	first := fs[0]
	code, lead := exitFailure, "could not run "
	switch first.Kind {
	case results.RuleShortfall:
		code, lead = exitRuleBroken, "not as expected: "
	case results.ThresholdShortfall:
		code, lead = exitRuleBroken, "threshold missed: "
	case results.InconclusiveShortfall:
		lead = "no verdict: "
	}
	msg := lead + first.Why
	if len(fs) > 1 {
		var more []string
		for _, f := range fs[1:] {
			more = append(more, f.Target)
		}
		msg += fmt.Sprintf(" (and %s: see the report)", strings.Join(more, ", "))
	}
	return verdictError{code, msg}
}

// fire is the opening run and load share: the plan, checked whole, then
// either all of it (whole), or under --shard this process's shard of it
// (shard), whose part is written for racelab verify to merge, with an
// exit that says how the shard went. what says on a terminal what the
// shard plays.
func fire[P any](ctx context.Context, s Streams, f *firing, plan func() (P, error), whole func(P) error,
	shard func(context.Context, P, engine.Sharding) (*results.ShardResult, error), what func(P, engine.Sharding) string) error {
	p, err := plan()
	if err != nil {
		return err
	}
	if !f.Shard.on() {
		return whole(p)
	}
	sh, err := f.Shard.sharding()
	if err != nil {
		return err
	}
	if late := shards.Late(sh.StartAt, time.Now()); late != "" {
		// Said under --quiet too: it is about the evidence, not progress.
		fmt.Fprintf(s.Err, "racelab: warning: shard %d of %d started %s after its release instant %s; it fires what is due at once, and verify counts those bursts as not simultaneous (give the shards a longer lead)\n",
			sh.Index, sh.Of, late, sh.StartAt.Format(time.RFC3339Nano))
	}
	if !f.Quiet && s.ErrIsTTY {
		when := "as soon as it is ready"
		if !sh.StartAt.IsZero() {
			when = "at " + sh.StartAt.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(s.Err, "racelab: shard %d of %d of run %s: %s, released %s; merge the parts with racelab verify\n", sh.Index, sh.Of, sh.RunID, what(p, sh), when)
	}
	part, err := shard(ctx, p, sh)
	if err != nil {
		return err
	}
	if f.Shard.Dir != "" && part.Run != nil {
		// A part records its race file from its folder, as a result does
		// from its file, so verify finds the file wherever the folder goes.
		dir, _ := filepath.Abs(f.Shard.Dir)
		part.Run.Settings = withRel(part.Run.Settings, dir)
	}
	data, err := shards.Encode(part, f.Sign.key())
	if err != nil {
		return err
	}
	if f.Shard.Dir == "" {
		_, err = s.Out.Write(data)
	} else if err = shards.Save(f.Shard.Dir, part, data); err != nil {
		err = fmt.Errorf("--shard-dir: %w", err)
	}
	if err != nil {
		return err
	}
	switch interrupted, failed := part.Outcome(); {
	case interrupted:
		return verdictError{exitInterrupted, "interrupted: the shard's part is partial"}
	case failed != "":
		return verdictError{exitFailure, fmt.Sprintf("could not run shard %d: %s", part.Shard, failed)}
	}
	return nil
}

func newRootCmd(s Streams, cat *targets.Catalog) *cobra.Command {
	root := &cobra.Command{
		Use:   "racelab",
		Short: "Fire simultaneous requests at a store and see whether its hard rule survives",
		Long: `racelab reproduces lost-update races and proves that fixes hold.

A scenario fires N requests at a target at the same instant, reads back what
the store counted, and compares it with what the requests were allowed:
ten simultaneous blog hits that become one view, a 5-a-day download quota that
lets twelve through, five buyers who all check out the same painting.

Targets are a faithful simulator of an eventually consistent KV store (kv),
atomic stores (actor, sqlite, redis, postgres), their naive strategies, and
any HTTP service (http://HOST:PORT). The simulated stores run in virtual
time: the same --seed replays the same race.`,
		Example: `  racelab run five-checkouts
  racelab run ten-hits-one-view -t kv -t sqlite --trials 50
  racelab run six-become-four --sequential --trials 200
  racelab explain ten-hits-one-view
  racelab serve --store kv &
  racelab list`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		// Every file flag reads with the command's context: Ctrl-C stops it.
		PersistentPreRun: func(c *cobra.Command, _ []string) {
			c.Flags().VisitAll(func(f *pflag.Flag) { readfile.Bind(c.Context(), f.Value) })
		},
		// Without a subcommand, show help; with an unknown one, say so on
		// one line with a suggestion, as a usage error.
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if sug := c.SuggestionsFor(args[0]); len(sug) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", sug[0])
			}
			var names []string
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return usageError{fmt.Errorf("%s (commands: %s)", msg, strings.Join(names, ", "))}
		},
	}
	// --version prints what `racelab version` does: its help says what.
	root.Version = "set"
	root.Flags().BoolP("version", "v", false, "print racelab's version, with Go's, the platform and the result schema")
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetIn(s.In)
	// A bad flag is a usage error (exit 2), stated on one line.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			f := bad.GetFlag()
			want := flagWants(f.Value.Type())
			if w := flagWant(""); errors.As(err, &w) {
				want = string(w) // the value's own word for what it wants
			}
			return usageError{fmt.Errorf("--%s %q: want %s (see '%s --help')", f.Name, bad.GetValue(), want, c.CommandPath())}
		}
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.SuggestionsMinimumDistance = 2
	root.PersistentFlags().Bool("wide", false, "draw every column of every table in full, however wide the terminal")
	wrapHelp(root, s)
	version := newVersionCmd(s)
	root.AddCommand(newRunCmd(s, cat, nil), newLoadCmd(s, cat, nil), newListCmd(s, cat), newExplainCmd(s, cat), newServeCmd(s, nil), newReportCmd(s, cat, nil), newVerifyCmd(s, cat, nil), version, newRaceCmd(s), newCleanCmd(s, cat), newIsolationCmd(s))
	// --wide is for commands that draw tables. version and completion
	// draw none: a hidden flag of their own shadows the root's, so that
	// neither their help nor the shell offers it.
	root.InitDefaultCompletionCmd()
	quiet := []*cobra.Command{version}
	if completion, _, err := root.Find([]string{"completion"}); err == nil && completion != root {
		quiet = append(append(quiet, completion), completion.Commands()...)
	}
	for _, c := range quiet {
		c.Flags().Bool("wide", false, "")
		_ = c.Flags().MarkHidden("wide")
	}
	return root
}

// flagWants says in words what a flag of a pflag type takes, instead of
// the parser's "strconv.ParseInt: parsing …: invalid syntax".
// flagWant is a flag value's refusal that says what it wants, for a
// value whose type name alone does not ("a string" for a key that must
// not be empty).
type flagWant string

func (w flagWant) Error() string { return "want " + string(w) }

func flagWants(typ string) string {
	switch typ {
	case "int", "int64":
		return "a whole number"
	case "duration":
		return "a duration such as 500ms, 5s or 1m"
	case "bool":
		return "true or false"
	default:
		return "a " + typ
	}
}

// exactArgs is cobra.ExactArgs with a usage error and a message that says
// what was expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s takes %s; got %s (see '%s --help')", c.CommandPath(), what, results.Plural(int64(len(args)), "argument"), c.CommandPath())}
		}
		return nil
	}
}

// someArgs refuses a command line without arguments, saying what the
// command takes.
func someArgs(what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError{fmt.Errorf("%s takes %s (see '%s --help')", c.CommandPath(), what, c.CommandPath())}
		}
		return nil
	}
}

// widthAnnotation holds, on the root command, the width of the streams
// it writes to, for the usage template's flagUsages.
const widthAnnotation = "racelab/width"

// The usage template folds each flag's help to the terminal, as tables
// are. Template functions are cobra's own global, so the function keeps no
// state: it reads the width off the command it renders.
func init() {
	cobra.AddTemplateFunc("flagUsages", func(c *cobra.Command, f *pflag.FlagSet) string {
		width, _ := strconv.Atoi(c.Root().Annotations[widthAnnotation])
		if wide, err := c.Flags().GetBool("wide"); err == nil && wide {
			width = 0
		}
		return foldLongWords(f.FlagUsagesWrapped(width), width)
	})
}

// foldLongWords cuts the lines pflag could not fold, those holding one
// word wider than the room (a server URL as a flag's default), at width,
// continuing under the line's own indent.
func foldLongWords(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	var out []string
	for _, line := range lines {
		for len([]rune(line)) > width {
			indent := len(line) - len(strings.TrimLeft(line, " "))
			if indent >= width/2 {
				indent = 2
			}
			r := []rune(line)
			out = append(out, string(r[:width]))
			line = strings.Repeat(" ", indent) + string(r[width:])
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// wrapHelp makes every command's help fold its flags to s.Width.
func wrapHelp(root *cobra.Command, s Streams) {
	root.Annotations = map[string]string{widthAnnotation: strconv.Itoa(s.Width)}
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, ".LocalFlags.FlagUsages", "flagUsages $ .LocalFlags")
	t = strings.ReplaceAll(t, ".InheritedFlags.FlagUsages", "flagUsages $ .InheritedFlags")
	root.SetUsageTemplate(t)
}
