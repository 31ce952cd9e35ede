// Package output is what a command writes besides its reports' content:
// where the reports go, and the bars on standard error while it fires.
//
// Several outputs from one run, such as -o table -o junit=r.xml -o
// json=r.json -o markdown+=$GITHUB_STEP_SUMMARY: every command that
// writes reports reads its outputs with Parse and writes them with Write,
// so that the syntax, its checks and the way files are written are one.
// The errors name the setting {Output}; the command line says its flag.
//
// The bars (mpb) are one over a run's trials (TrialBar) and one per
// sustained load with its rate, p99 and errors so far (WatchLoad). They
// are drawn only on a terminal, and gone before the report is printed
// below them.
package output
