// Command racelab is the command-line face of racelab: cobra commands, their
// flags, the streams they write to and exit codes. It is thin
// on purpose: every command parses its flags into an options struct, builds
// a plan, calls the scenarios and report packages, and prints. A command
// is a file (run.go, load.go, …) whose run function takes a context, the
// streams and its options; every flag type is in flags.go, and what the
// commands share (streams, exit codes, the root) in app.go. Where reports
// go, and the bars on stderr, are report/output.
//
// Exit codes (mapped in one place, exitCode):
//
//	0    every target behaved as expected (a naive store breaking is expected)
//	1    racelab could not do its job (target unreachable, I/O)
//	2    usage error: unknown scenario or target, bad flag value
//	3    a hard rule broke where it was expected to hold, or a race
//	     demanded with --expect race did not show
//	130  interrupted; the partial report is still printed
package main
