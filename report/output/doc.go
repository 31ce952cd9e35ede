// Package output is where a command's reports go: several outputs from
// one run, such as -o table -o junit=r.xml -o json=r.json -o
// markdown+=$GITHUB_STEP_SUMMARY. Every command that writes reports reads
// its outputs with Parse and writes them with Write, so that the syntax,
// its checks and the way files are written are one. The errors name the
// setting {Output}; the command line says its flag.
package output
