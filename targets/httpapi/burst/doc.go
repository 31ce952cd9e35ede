// Package gchold turns the garbage collector off for a while and back on,
// for the instants when a collection would cost more than the memory it
// frees: an HTTP/2 burst, from the end of its staging to its last answer,
// while a server on the same machine reads it. Holds overlap; the last to
// let go puts the settings back, and each lets go by itself after a bound.
package burst
