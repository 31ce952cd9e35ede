package scenarios

import "embed"

// Hermitage is Hermitage's ten isolation tests (github.com/ept/hermitage)
// as the SQL race files shipped in races/sql, hermitage-NAME.race.yaml,
// replaying its scripts statement by statement (order:). They are
// embedded so that `racelab isolation` (package scenarios/isolation) runs
// them from any folder.
//
//go:embed races/sql/hermitage-*.race.yaml
var Hermitage embed.FS

// HermitageTests are Hermitage's tests in its table's order, each with
// its file in Hermitage, under races/sql.
var HermitageTests = []struct{ Name, File string }{
	{"G0", "hermitage-g0.race.yaml"},
	{"G1a", "hermitage-g1a.race.yaml"},
	{"G1b", "hermitage-g1b.race.yaml"},
	{"G1c", "hermitage-g1c.race.yaml"},
	{"OTV", "hermitage-otv.race.yaml"},
	{"PMP", "hermitage-pmp.race.yaml"},
	{"P4", "hermitage-p4.race.yaml"},
	{"G-single", "hermitage-g-single.race.yaml"},
	{"G2-item", "hermitage-g2-item.race.yaml"},
	{"G2", "hermitage-g2.race.yaml"},
}
