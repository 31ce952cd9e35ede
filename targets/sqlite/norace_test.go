//go:build !race

package sqlite

// raceDetector is true when the tests run under the race detector, which
// makes the transpiled SQLite engine about fifteen times slower.
const raceDetector = false
