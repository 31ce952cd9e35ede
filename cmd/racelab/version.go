package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/racelab/racelab/scenarios"
	"github.com/spf13/cobra"
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
			_, err := fmt.Fprintf(s.Out, "racelab %s (%s, %s/%s, results %s)\n",
				buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, scenarios.SchemaVersion)
			return err
		},
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
