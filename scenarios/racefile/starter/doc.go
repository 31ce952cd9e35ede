// Package starter writes the start of a race file for its author to
// finish: a commented template (Template, racelab race init) or one made
// from a pasted curl command (FromCurl, racelab race from-curl), whose
// credentials become env: holes rather than text in the file.
//
// Split reads one command line as a POSIX shell reads it (quotes,
// backslashes, line continuations, bash's $'…'), with mvdan.cc/sh's
// parser, and refuses anything a shell would expand or run instead of
// passing it on as text: racelab reads a pasted curl command and the
// README's examples, and neither may depend on a shell.
package starter
