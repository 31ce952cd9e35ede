package main

import (
	"github.com/racelab/racelab/scenarios"
	"github.com/spf13/pflag"
)

// httpFlags are run's flags for http:// targets.
type httpFlags struct{}

func (h *httpFlags) register(*pflag.FlagSet) {}

func (h *httpFlags) apply(*scenarios.Plan) error { return nil }
