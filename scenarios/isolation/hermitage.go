package isolation

import "embed"

// hermitageFiles are Hermitage's tests as race files,
// hermitage/hermitage-NAME.race.yaml, embedded so that `racelab isolation`
// runs them from any folder.
//
//go:embed hermitage/*.race.yaml
var hermitageFiles embed.FS

// hermitageTests are Hermitage's tests in its table's order, each
// with its file in hermitageFiles (under hermitage/).
var hermitageTests = []struct{ Name, File string }{
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
