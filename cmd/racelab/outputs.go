package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/racelab/racelab/report"
)

// Several outputs from one run: `-o table -o junit=r.xml -o json=r.json
// -o markdown+=$GITHUB_STEP_SUMMARY`. Every command that writes reports
// (run, report, load, explain) takes its -o through outputFlags, so that
// the syntax, its checks and the way files are written are one.

// output is one -o value: a format, and the file it goes to.
type output struct {
	Format string
	// Path is the file; "" is standard output.
	Path string
	// Append adds to the file instead of replacing it (FORMAT+=FILE), for
	// files that collect several steps' reports, such as a CI job summary.
	Append bool
}

// outputFlags is a command's -o flag: FORMAT, FORMAT=FILE or FORMAT+=FILE,
// repeatable.
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

// parse reads the -o values, checking everything that can be checked
// before any work is done: known formats, at most one output to standard
// output, no file named twice, and a folder to put each file in. The
// format names come back as the command spells them, whatever the case
// the user typed.
func (o *outputFlags) parse() ([]output, error) {
	if len(o.raw) == 0 {
		return []output{{Format: o.formats[0]}}, nil
	}
	var outs []output
	stdout, files := "", map[string]string{}
	for _, raw := range o.raw {
		name, path, hasPath := strings.Cut(raw, "=")
		out := output{Path: path}
		if n, ok := strings.CutSuffix(name, "+"); ok && hasPath {
			name, out.Append = n, true
		}
		name = strings.ToLower(strings.TrimSpace(name))
		i := slices.Index(o.formats, name)
		if i < 0 {
			what := fmt.Sprintf("unknown output format %q", name)
			if slices.Contains(report.LoadFormats(), name) {
				what = name + " is written of loads only" // csv: a run has no seconds to plot
			}
			return nil, usageError{fmt.Errorf("-o %s: %s; want %s, each alone or as FORMAT=FILE", raw, what, orList(o.formats))}
		}
		out.Format = o.formats[i]
		switch {
		case hasPath && path == "":
			return nil, usageError{fmt.Errorf("-o %s: no file after =; want %s=FILE, or %s alone for standard output", raw, out.Format, out.Format)}
		case path == "-": // the usual name for standard output
			out.Path = ""
		}
		if out.Path == "" {
			if stdout != "" {
				return nil, usageError{fmt.Errorf("-o %s and -o %s would both write to standard output; send one to a file: -o %s=FILE", stdout, raw, out.Format)}
			}
			stdout = raw
			outs = append(outs, out)
			continue
		}
		clean := filepath.Clean(out.Path)
		if first, ok := files[clean]; ok {
			return nil, usageError{fmt.Errorf("-o %s and -o %s name the same file; give each output its own", first, raw)}
		}
		files[clean] = raw
		if fi, err := os.Stat(filepath.Dir(clean)); err != nil || !fi.IsDir() {
			return nil, usageError{fmt.Errorf("-o %s: no folder %s to write %s in", raw, filepath.Dir(clean), filepath.Base(clean))}
		}
		if fi, err := os.Stat(clean); err == nil && fi.IsDir() {
			return nil, usageError{fmt.Errorf("-o %s: %s is a folder; want a file name", raw, clean)}
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// renderFunc writes one output in format to w, fitting tables to width
// display columns (0: no limit).
type renderFunc func(w io.Writer, format string, width int) error

// writeOutputs renders each output and writes it: files first, in the
// order given, then standard output, so that the terminal's last word is
// the report a person reads. A table on standard output fits width; one
// in a file is drawn in full, since a file has no terminal. Each output is
// rendered whole before it is written, so a failure leaves no half
// report; the first failure is returned, after the other outputs have
// been tried.
func writeOutputs(s Streams, width int, outs []output, render renderFunc) error {
	var errs []error
	var toStdout *output
	for i := range outs {
		out := &outs[i]
		if out.Path == "" {
			toStdout = out
			continue
		}
		var b bytes.Buffer
		if err := render(&b, out.Format, 0); err != nil {
			errs = append(errs, fmt.Errorf("write %s to %s: %w", out.Format, out.Path, err))
			continue
		}
		if err := writeFile(out.Path, b.Bytes(), out.Append); err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", out.Format, err)) // a *PathError names the file
		}
	}
	if toStdout != nil {
		if err := render(s.Out, toStdout.Format, width); err != nil {
			errs = append(errs, fmt.Errorf("write report: %w", err))
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

func writeFile(path string, data []byte, appendTo bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
