// Package httpflags holds the flags that say how racelab reaches a
// service over HTTP (--sync, --http-call, --http-map, --http-header,
// --http-insecure), declared once for run, load, explain and verify, and
// turned into the client's settings (httpapi.Config). Every mistake in
// them is a usage error (usage.Err), said in the flag's own words.
package httpflags
