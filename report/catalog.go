package report

import (
	"bytes"
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/racelab/racelab/internal/usage"
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
	// Instead says what a target that plays no scenario plays instead
	// ("SQL race files"), so that the matrix does not read "nothing".
	Instead string
}

// WriteCatalog writes the scenario table, then the target × scenario
// matrix, both at most width display columns wide (0: no limit). A narrow
// matrix leaves out the scenario columns and says under it which targets
// play which scenarios. say names the fields the words advise as their
// flags (nil: as fields).
func WriteCatalog(w io.Writer, c Catalog, width int, say func(field string) string) error {
	var b bytes.Buffer
	b.WriteString("Scenarios\n")
	rows := make([][]string, len(c.Scenarios))
	for i, s := range c.Scenarios {
		rows[i] = []string{s.Name, strconv.Itoa(s.Requests), s.Rule}
	}
	cols := []column{{title: "SCENARIO", fold: true}, {title: "N", numeric: true}, {title: "HARD RULE", fold: true}}
	_, rows = fitColumns(cols, rows, width)
	if err := writeGrid(&b, cols, rows, false); err != nil {
		return err
	}
	b.WriteString("\n" + wrapLine(usage.Name("Targets (run one with {Targets} NAME; parameters as NAME?key=value&key=value)", say), width) + "\n")
	cols = []column{{title: "TARGET", fold: true}, {title: "GUARANTEE", fold: true}, {title: "EXPECTED"}, {title: "NEEDS", drop: 1}}
	for _, s := range c.Scenarios {
		cols = append(cols, column{title: s.Name, drop: 2})
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
	keep, fitted := fitColumns(cols, rows, width)
	kept := make([]column, len(keep))
	for k, j := range keep {
		kept[k] = cols[j]
	}
	if err := writeGrid(&b, kept, fitted, false); err != nil {
		return err
	}
	if len(keep) < len(cols) {
		b.WriteByte('\n')
		for _, line := range playsLines(c, keep) {
			b.WriteString(wrapLine(line, width) + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// playsLines say, for a matrix whose columns after the first four were
// not all kept, what the missing ones held: which targets need a server,
// and which scenarios each target plays.
func playsLines(c Catalog, keep []int) []string {
	var lines []string
	if !slices.Contains(keep, 3) {
		var embedded, server []string
		for _, t := range c.Targets {
			if t.Embedded {
				embedded = append(embedded, t.Name)
			} else {
				server = append(server, t.Name)
			}
		}
		lines = append(lines, "needs nothing: "+strings.Join(embedded, ", "), "needs a server: "+strings.Join(server, ", "))
	}
	all, some := []string{}, []string{}
	for _, t := range c.Targets {
		var plays []string
		for i, ok := range t.Plays {
			if ok {
				plays = append(plays, c.Scenarios[i].Name)
			}
		}
		if len(plays) == len(c.Scenarios) {
			all = append(all, t.Name)
		} else {
			instead := cmp.Or(t.Instead, "nothing")
			some = append(some, t.Name+" plays "+strings.Join(append(plays, instead)[:max(1, len(plays))], ", "))
		}
	}
	if len(some) == 0 {
		return append(lines, "every target plays every scenario")
	}
	if len(all) > 0 {
		lines = append(lines, "plays every scenario: "+strings.Join(all, ", "))
	}
	return append(lines, some...)
}
