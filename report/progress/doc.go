// Package progress draws the bars racelab shows on standard error while
// it fires (mpb): one over a run's trials, and one per sustained load with
// its rate, p99 and errors so far. They are drawn only on a terminal, and
// gone before the report is printed below them.
package progress
