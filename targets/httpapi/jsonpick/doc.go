// Package jsonpick reads a few named fields straight off the bytes of a
// JSON object, without decoding it. racelab judges every answer of a
// load by a handful of fields (the count, the key echoed, a yes or no);
// decoding each body into a map with encoding/json cost more than reading
// the answer off the socket (issue 24). Pick checks the whole text as it
// goes and declines, rather than guesses, whatever it does not read the
// way encoding/json would (escapes, text that is not UTF-8, deep nesting):
// its caller then decodes the body the ordinary way.
package jsonpick
