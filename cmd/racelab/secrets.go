package main

import "github.com/spf13/pflag"

// addShowSecrets is --show-secrets, one wording on run and explain: a
// race file's secrets (Authorization, Cookie, Set-Cookie and
// Proxy-Authorization values, captures and headers marked secret: true)
// show as … in every output and error unless it is given.
func addShowSecrets(f *pflag.FlagSet, dst *bool) {
	f.BoolVar(dst, "show-secrets", false, "show a race file's secrets (credentials, sessions, values marked secret: true) instead of … in outputs and errors")
}
