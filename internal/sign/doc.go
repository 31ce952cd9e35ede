// Package sign signs racelab's JSON documents (results, load results,
// shard parts) with HMAC-SHA-256 and checks them, so that a verifier who
// holds the key can tell a document racelab wrote from one edited since.
//
// The signature is over a canonical form of the document, not its bytes:
// the JSON decoded, its top-level "signature" field left out, and encoded
// again with sorted keys and numbers exactly as written. Indentation and
// key order can then change (a pretty-printer, jq) without breaking the
// signature, while any change of a value does.
package sign
