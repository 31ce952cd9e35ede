package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios/results"
)

// Output is one output asked for: a format, and the file it goes to.
type Output struct {
	Format string
	// Path is the file; "" is standard output.
	Path string
	// Append adds to the file instead of replacing it (FORMAT+=FILE), for
	// files that collect several steps' reports, such as a CI job summary.
	Append bool
}

// Parse reads outputs written FORMAT, FORMAT=FILE or FORMAT+=FILE,
// for a command that writes the formats named, the first being the
// default. It checks everything that can be checked before any work is
// done: known formats, at most one output to standard output, no file
// named twice, and a folder to put each file in. The format names come
// back as formats spells them, whatever the case raw has.
func Parse(raw, formats []string) ([]Output, error) {
	if len(raw) == 0 {
		return []Output{{Format: formats[0]}}, nil
	}
	var outs []Output
	stdout, files := "", map[string]string{}
	for _, raw := range raw {
		name, path, hasPath := strings.Cut(raw, "=")
		out := Output{Path: path}
		if n, ok := strings.CutSuffix(name, "+"); ok && hasPath {
			name, out.Append = n, true
		}
		name = strings.ToLower(strings.TrimSpace(name))
		i := slices.Index(formats, name)
		if i < 0 {
			what := fmt.Sprintf("unknown output format %q", name)
			if slices.Contains(report.LoadFormats(), name) {
				what = name + " is written of loads only" // csv: a run has no seconds to plot
			}
			return nil, usage.Fieldf("Output", "{} %s: %s; want %s, each alone or as FORMAT=FILE", raw, what, results.OrList(formats))
		}
		out.Format = formats[i]
		switch {
		case hasPath && path == "":
			return nil, usage.Fieldf("Output", "{} %s: no file after =; want %s=FILE, or %s alone for standard output", raw, out.Format, out.Format)
		case path == "-": // the usual name for standard output
			out.Path = ""
		}
		if out.Path == "" {
			if stdout != "" {
				return nil, usage.Fieldf("Output", "{} %s and {} %s would both write to standard output; send one to a file: {} %s=FILE", stdout, raw, out.Format)
			}
			stdout = raw
			outs = append(outs, out)
			continue
		}
		clean := filepath.Clean(out.Path)
		if first, ok := files[clean]; ok {
			return nil, usage.Fieldf("Output", "{} %s and {} %s name the same file; give each output its own", first, raw)
		}
		files[clean] = raw
		if fi, err := os.Stat(filepath.Dir(clean)); err != nil || !fi.IsDir() {
			return nil, usage.Fieldf("Output", "{} %s: no folder %s to write %s in", raw, filepath.Dir(clean), filepath.Base(clean))
		}
		if fi, err := os.Stat(clean); err == nil && fi.IsDir() {
			return nil, usage.Fieldf("Output", "{} %s: %s is a folder; want a file name", raw, clean)
		}
		outs = append(outs, out)
	}
	return outs, nil
}

// SavesJSON says whether one of outs writes the result as JSON.
func SavesJSON(outs []Output) bool {
	return slices.ContainsFunc(outs, func(o Output) bool { return o.Format == string(report.JSON) })
}

// File is an output's buffer on its way to a file, rendered whole before
// it is written. A renderer that records paths relative to where its
// output goes (a result's race file) reads the file's Path from it.
type File struct {
	bytes.Buffer
	Path string
}

// RenderFunc writes one output in format to w, fitting tables to width
// display columns (0: no limit).
type RenderFunc func(w io.Writer, format string, width int) error

// Write renders each output and writes it: files first, in the
// order given, then stdout, so that the terminal's last word is the
// report a person reads. A table on stdout fits width; one in a file is
// drawn in full, since a file has no terminal. Each output is rendered
// whole before it is written, so a failure leaves no half report; the
// first failure is returned, after the other outputs have been tried.
func Write(stdout io.Writer, width int, outs []Output, render RenderFunc) error {
	var errs []error
	var toStdout *Output
	for i := range outs {
		out := &outs[i]
		if out.Path == "" {
			toStdout = out
			continue
		}
		b := File{Path: out.Path}
		if err := render(&b, out.Format, 0); err != nil {
			errs = append(errs, fmt.Errorf("write %s to %s: %w", out.Format, out.Path, err))
			continue
		}
		if err := writeFile(out.Path, b.Bytes(), out.Append); err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", out.Format, err)) // a *PathError names the file
		}
	}
	if toStdout != nil {
		if err := render(stdout, toStdout.Format, width); err != nil {
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

// WithTerminal adds the table on standard output when every output goes
// to a file, as k6 prints its summary whatever it writes: a person who
// ran the command sees what came of it. quiet (-q) leaves it out.
func WithTerminal(outs []Output, quiet bool) []Output {
	if quiet || slices.ContainsFunc(outs, func(o Output) bool { return o.Path == "" }) {
		return outs
	}
	return append(slices.Clone(outs), Output{Format: string(report.Table)})
}
