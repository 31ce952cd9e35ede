package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/racelab/racelab/report"
)

// outputFlags is a command's -o flag: FORMAT, FORMAT=FILE or FORMAT+=FILE,
// repeatable, read by report.ParseOutputs.
type outputFlags struct {
	raw []string
	// formats are the names the command knows, its default first.
	formats []string
}

// register adds -o to f for a command that writes the formats named, the
// first being the default.
func (o *outputFlags) register(c *cobra.Command, f *pflag.FlagSet, formats []string) {
	o.formats = formats
	f.StringArrayVarP(&o.raw, "output", "o", nil,
		"output `FORMAT`, to standard output; FORMAT=FILE writes a file, FORMAT+=FILE appends to one;\n"+
			"repeat for several (default "+formats[0]+"; formats: "+strings.Join(formats, ", ")+")")
	_ = c.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return o.formats, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// parse reads the -o values, checking them before any work is done.
func (o *outputFlags) parse() ([]report.Output, error) { return report.ParseOutputs(o.raw, o.formats) }
