// Package shellwords splits one command line into its words as a POSIX
// shell reads them (quotes, backslashes, line continuations, bash's $'…'),
// with mvdan.cc/sh's parser, and refuses anything a shell would expand or
// run instead of passing it on as text: racelab reads a pasted curl
// command and the README's examples, and neither may depend on a shell.
package shellwords
