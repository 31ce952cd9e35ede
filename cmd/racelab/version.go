package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/scenarios/results"
)

// version is set at link time by `make build` (-X main.version=…); a plain
// `go install` falls back to the module version recorded in the binary.
var version = ""

func newVersionCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print racelab's version",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(s.Out, versionLine())
			return err
		},
	}
}

// versionLine is what `racelab version` and `racelab --version` print.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return fmt.Sprintf("racelab %s (%s, %s/%s, results %s)",
		buildVersion(version, bi), runtime.Version(), runtime.GOOS, runtime.GOARCH, results.SchemaVersion)
}

// buildVersion is racelab's version: the one set at link time, else the
// module's (a tagged `go install …@v1.2.0`, or the pseudo-version Go
// stamps on a build in a clone), else the commit the binary was built
// from, "+dirty" when the tree had changes, else "(devel)": a build with
// -buildvcs=false outside any module version.
func buildVersion(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if bi == nil {
		return "(devel)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			dirty = kv.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	v := "devel-" + rev[:min(12, len(rev))]
	if dirty {
		v += "+dirty"
	}
	return v
}
