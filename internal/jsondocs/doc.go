// Package jsondocs reads a stream of JSON documents (one after another,
// as racelab run -o json appends them) one document at a time in bounded
// memory, and estimates what each would cost decoded (Weigh), so that a
// reader can refuse an input before it decodes past its bound. It finds
// where a document ends and nothing more: encoding/json checks the
// syntax, and Line says on which line of the stream an error is.
package jsondocs
