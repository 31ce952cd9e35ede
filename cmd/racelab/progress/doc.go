// Package progress draws racelab's progress bars on stderr while a run or
// a load goes on: one bar over a run's trials, one per load target with
// its rate, errors and p99. It is racelab's only user of mpb, so an API
// change there stays in this package, and it fits each line to the
// terminal's width so that the bar itself never collapses.
package progress
