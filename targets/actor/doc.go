// Package actor simulates a Cloudflare Durable Object: one single-threaded
// object per key, each with its own strongly consistent storage.
//
// Every key (a slug, a visitor, an item) is owned by one goroutine that
// reads its requests from a mailbox. The goroutine is the object: its
// storage is a map only it touches, and it handles one delivered request at
// a time. While a request awaits the object's own storage (StorageLatency)
// the goroutine is busy, so no other request is delivered; this is the
// platform's input gate, and it is why the plain strategy turns read,
// compare and write into one operation without any lock.
//
// The input gate covers storage only. A request that awaits something
// outside the object, such as a fetch to another service, lets the object
// take the next request in the meantime. The "await-fetch" strategy does
// exactly that between its read and its write: the handler reads, starts the
// fetch and returns; when the fetch completes (FetchLatency later) the write
// comes back to the mailbox as a continuation, behind whatever requests
// arrived in between. Those requests read the same old value, so updates are
// lost, as the Durable Objects documentation warns. Nothing here is a Go
// data race: the loss is the object's own bookkeeping, and the race
// detector stays quiet.
//
// # Time and traces
//
// Objects, fetches, mailboxes and replies all go through Config.Clock
// (package clock): goroutines are started with clock.Go, the mailbox and
// the reply are clock.Chans, and storage and fetch latencies are
// clock.Sleeps. On the real clock that is exactly a goroutine per object
// reading a Go channel. On a *clock.Virtual the objects are participants,
// and a burst run with clock.Run is a deterministic sequence of events: the
// default strategy serves ten hits in arrival order in exactly twenty
// storage round trips, and await-fetch loses the same updates every time.
//
// With a story.Recorder in a request's context (story.WithRecorder), the
// object records what the request did, on the store's clock: read (the value
// its storage answered), write (once its storage has taken it), fetch (when
// await-fetch starts its outside I/O, the input gate opening) and refuse (the
// quota's limit, an item sold out).
//
// Besides the stories' own objects, a Store keeps capped counts for an op
// of a story's own (Take and Taken, story.Capped): one object per op and
// key, granting while the count is below the request's limit, with the
// same gate and the same await-fetch gap as every other story.
//
// The package knows nothing of racelab's stories beyond their interfaces
// (package story): the targets package opens a Store as a target.
package actor
