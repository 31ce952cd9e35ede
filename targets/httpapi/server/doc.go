// Package server is the server side of racelab's HTTP contract: the
// http.Handler that `racelab serve` runs over any store (Handler), and the
// guarded HTTP server it runs behind (Server).
//
// Handler answers the routes httpapi declares (httpapi.Contract, or
// httpapi.ContractOver a story's own ops table) so that racelab's client,
// any other HTTP client and the classroom page all reach one store
// through one contract. It reads each request whole before acting on it:
// a synchronized burst withholds a request's last byte (HTTP/1.1) or frame
// (HTTP/2), and acting earlier would act before the release. The instant
// a request was complete is sent back in httpapi.ArrivalHeader on every
// answer, and /stats sums the arrival spread per key.
//
// Bugs (WithBug) are mistakes it makes on purpose for a workshop to find.
//
// Server is the HTTP server racelab serve runs: HTTP/1.1 and HTTP/2 with
// prior knowledge (h2c), guarded as a service on a developer's machine
// must be, since any web page the developer opens can send requests to it
// (DNS rebinding, cross-site requests, a flood of connections). It knows
// nothing of what it serves: the contract's Handler and the classroom
// page run behind it, and answer their errors as its refusals are
// answered, in JSON (WriteError).
package server
