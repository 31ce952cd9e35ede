// Package burst sends prepared HTTP requests to one service, whole or as
// one synchronized burst, and hands back their raw answers.
//
// A request comes in as a Wire (method, request target, headers, body),
// made by the caller; an answer goes out as an Answer (status, headers,
// body, the instant the server says the request arrived, and whether it
// was answered early). What the requests mean, and what their answers
// say, is the caller's business: package httpapi builds the contract's
// wires and decodes their answers, package racefile sends a race file's
// own. Errors are values, per request: a request that fails costs its
// burst nothing else.
//
// # Synchronized bursts
//
// A race only shows when requests truly overlap at the server, and the
// scheduling of goroutines and the opening of connections smear a naive
// burst over milliseconds. A Pool therefore stages every request of a
// burst before the caller's barrier (Stage) and sends only its final part
// after it, on connections opened and warmed beforehand (Prepare):
//
//   - lastbyte (HTTP/1.1): each request is written but its final byte on a
//     connection of its own; after the release each writes its last byte.
//   - h2 (HTTP/2, h2c prior knowledge on http://, ALPN on https://): every
//     request's HEADERS go out with END_STREAM withheld; after the release one
//     socket write per connection carries the final empty DATA frame of every
//     stream on it, at most the server's stream limit per connection.
//   - none: ordinary requests on warmed connections, for comparison.
//
// SyncAuto picks h2 when the server speaks it and lastbyte otherwise. The
// last of a burst's functions to be called releases it (see burstLatch),
// so that no request is sent before its caller asked for it. A request
// answered before its final part was sent is marked Early: the burst was
// not synchronized and proves nothing. A socket peek (Pending) tells an
// HTTP/1.1 answer that came early; the garbage collector is held off from
// an HTTP/2 burst's staging to its last answer (Hold).
//
// A burst's requests are either handed over whole (Pool.Stage takes the
// wires) or made by code of the caller's own, a story's request function,
// as it makes them on any target: a Gate runs each of the burst's calls
// under a context of its own (StageCalls), and Send, asked under it,
// stages the call's request rather than send it, so that a request has one
// definition whether it goes whole or in a burst.
//
// Whole requests (Send) go over plain HTTP/1.1 keep-alive connections the
// lean way (lean.go; on Linux with raw system calls, leanio_linux.go), or
// with net/http for https, HTTP/2 and a proxy.
//
// Conn and Dial are a raw HTTP/1.1 connection for tests that write a
// request byte by byte.
package burst
