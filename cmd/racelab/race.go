package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/racefile/starter"
)

// newRaceCmd is `racelab race`: race files written, checked and started
// without a target. Running one is `racelab run FILE`, as for any story.
func newRaceCmd(s Streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "race",
		Short: "Write and check race files: your own race, judged by your rule",
		Long: `A race file (*.race.yaml) describes a race on any HTTP API: setup requests,
the raced burst, readback requests whose JSON answers are named, and a hard
rule in CEL judged on what was read back. racelab run, load and explain take
a race file where they take a scenario:

  racelab run coupon.race.yaml -t naive=http://127.0.0.1:8080 \
    --expect naive=breaks`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newRaceLintCmd(s), newRaceInitCmd(s), newRaceFromCurlCmd(s))
	return c
}

func newRaceLintCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE…",
		Short: "Check race files (YAML, templates, CEL) without a target",
		Long: `Check race files as racelab run would before sending anything: the YAML,
every key, every template's variables, and every CEL expression's types.
Each file that is wrong gets one line, FILE:LINE:COL: what is wrong, and
the command exits 2; a clean run prints one line per file and exits 0.`,
		Example: "  racelab race lint scenarios/races/*.race.yaml",
		Args:    argsBetween(1, -1, "one or more race files"),
		RunE: func(c *cobra.Command, args []string) error {
			var bad []error
			for _, path := range args {
				f, err := racefile.Load(c.Context(), path)
				if errors.Is(err, context.Canceled) {
					return err
				}
				if err != nil {
					fmt.Fprintln(s.Err, err)
					bad = append(bad, err)
					continue
				}
				fmt.Fprintf(s.Out, "%s: ok: %s, %d requests a burst, rule %s\n", path, f.Name, f.Requests, f.Rule.Src)
				for _, n := range f.Notes() {
					fmt.Fprintf(s.Err, "racelab: %s: note: %s\n", path, n)
				}
			}
			if len(bad) > 0 {
				return usageError{errSilent} // each file's line is said
			}
			return nil
		},
	}
}

func newRaceInitCmd(s Streams) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "init [FILE]",
		Short: "Write a commented starter race file (default: to stdout)",
		Example: `  racelab race init coupon.race.yaml
  racelab race init > my.race.yaml`,
		Args: argsBetween(0, 1, "at most one file to write"),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				_, err := fmt.Fprint(s.Out, starter.Template)
				return err
			}
			return writeNew(s, args[0], starter.Template, force)
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite FILE if it exists")
	return c
}

func newRaceFromCurlCmd(s Streams) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "from-curl 'curl …'",
		Short: "Turn a copied curl command into a starter race file",
		Long: `Turn a curl command (a browser's "copy as cURL") into a starter race
file: its method, path, headers and body become the burst; the readback and
the rule are yours to write. The command is one argument: quote it.
racelab reads it as a shell would (quotes, backslashes, bash's $'…'), but
runs no shell: what a shell would expand ($VAR, $(…), {a,b}) is refused, so
paste the values themselves.`,
		Example: `  racelab race from-curl 'curl -X POST https://shop.example/api/redeem \
    -H "Authorization: Bearer x" --json "{\"account\":\"a1\"}"'`,
		Args: exactArgs(1, "one curl command, quoted"),
		RunE: func(c *cobra.Command, args []string) error {
			file, target, notes, err := starter.FromCurl(args[0])
			if err != nil {
				return usageError{fmt.Errorf("race from-curl: %w", err)}
			}
			for _, n := range notes {
				fmt.Fprintf(s.Err, "racelab: %s\n", n)
			}
			if out == "" {
				_, err = fmt.Fprint(s.Out, file)
				return err
			}
			if err := writeNew(s, out, file, false); err != nil {
				return err
			}
			fmt.Fprintf(s.Err, "racelab: then: racelab race lint %s && racelab run %s -t %s\n", out, out, target)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the race file here instead of to stdout")
	return c
}

// writeNew writes a new file, refusing to overwrite one unless force.
func writeNew(s Streams, path, content string, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return usageError{fmt.Errorf("%s exists; choose another name, or overwrite it with --force", path)}
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "racelab: wrote %s\n", path)
	return nil
}

// argsBetween is exactArgs for lo to hi arguments (hi < 0: no most).
func argsBetween(lo, hi int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < lo || hi >= 0 && len(args) > hi {
			return usageError{fmt.Errorf("%s takes %s; got %d arguments (see '%s --help')", c.CommandPath(), what, len(args), c.CommandPath())}
		}
		return nil
	}
}
