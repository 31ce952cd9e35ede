package report

import (
	"bytes"
	"io"
	"strconv"
)

// Catalog is what `racelab list` shows: the stories and the targets that
// can play them.
type Catalog struct {
	Scenarios []CatalogScenario
	Targets   []CatalogTarget
}

// CatalogScenario is one story in the catalog.
type CatalogScenario struct {
	Name     string
	Requests int // the story's N
	Rule     string
	Title    string
}

// CatalogTarget is one target in the catalog.
type CatalogTarget struct {
	Name      string
	Guarantee string
	Expect    string // "holds" or "breaks"
	Embedded  bool   // runs inside racelab, no server needed
	Plays     []bool // per scenario, in the order of Catalog.Scenarios
}

// WriteCatalog writes the scenario table, then the target × scenario matrix.
func WriteCatalog(w io.Writer, c Catalog) error {
	var b bytes.Buffer
	b.WriteString("Scenarios\n")
	rows := make([][]string, len(c.Scenarios))
	for i, s := range c.Scenarios {
		rows[i] = []string{s.Name, strconv.Itoa(s.Requests), s.Rule}
	}
	cols := []column{{title: "SCENARIO"}, {title: "N", numeric: true}, {title: "HARD RULE"}}
	if err := writeGrid(&b, cols, rows, false); err != nil {
		return err
	}
	b.WriteString("\nTargets (run one with -t NAME; parameters as NAME?key=value&key=value)\n")
	cols = []column{{title: "TARGET"}, {title: "GUARANTEE"}, {title: "EXPECTED"}, {title: "NEEDS"}}
	for _, s := range c.Scenarios {
		cols = append(cols, column{title: s.Name})
	}
	rows = make([][]string, len(c.Targets))
	for i, t := range c.Targets {
		needs := "a server"
		if t.Embedded {
			needs = "nothing"
		}
		row := []string{t.Name, t.Guarantee, t.Expect, needs}
		for _, ok := range t.Plays {
			mark := "-"
			if ok {
				mark = "yes"
			}
			row = append(row, mark)
		}
		rows[i] = row
	}
	if err := writeGrid(&b, cols, rows, false); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
