package main

import (
	"github.com/spf13/cobra"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

func newListCmd(s Streams, cat *targets.Catalog) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the scenarios and the targets that can play them",
		Long: `List the scenarios with their hard rules, then every target with what its
strategy guarantees, whether it is expected to keep the rules, and which
stories it can play. Use it to pick a line-up for -t.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			return report.WriteCatalog(s.Out, catalog(cat), s.of(c).Width, flagOf)
		},
	}
}

// catalog gathers the scenario and target tables that `list` prints.
func catalog(cat *targets.Catalog) report.Catalog {
	var c report.Catalog
	all := scenarios.All()
	for _, sc := range all {
		c.Scenarios = append(c.Scenarios, report.CatalogScenario{
			Name: sc.Name, Requests: sc.DefaultRequests, Rule: sc.Rule, Title: sc.Title,
		})
	}
	for _, e := range cat.Entries() {
		t := report.CatalogTarget{Name: e.Name, Guarantee: e.Guarantee, Expect: string(results.ExpectBreak), Embedded: e.Embedded}
		if e.Name == "http" || e.Name == "https" {
			t.Name = e.Name + "://HOST:PORT"
		}
		if e.Name == targets.SQLStore {
			t.Name = "postgres://…, mysql://…, sqlite:PATH"
			t.Instead = "SQL race files only (scenarios/races/sql)"
		}
		if e.Holds {
			t.Expect = string(results.ExpectHold)
		}
		for _, sc := range all {
			t.Plays = append(t.Plays, sc.Plays(e.Kind))
		}
		c.Targets = append(c.Targets, t)
	}
	return c
}
