// Package httpapi is racelab's HTTP contract (design.md §7) and the client
// that plays the stories over it.
//
// Client plays the stories against any service that speaks the contract,
// or one mapped onto it, for `-t http://…` targets, and the contract
// itself (Contract, ContractOver, Mapping) is declared here once. Its
// server side, what `racelab serve` runs over any store, is the subpackage
// server, which reads the same routes: a route, a status and a JSON field
// mean the same thing on both sides, and this package's tests run one
// against the other over real sockets. The wire beneath the client, whole
// requests and synchronized bursts, is the subpackage burst, which knows
// nothing of the contract: Client builds each call's request (a
// burst.Wire) and decodes its answer (a burst.Answer) by the call's route.
//
// The contract, base URL B, keys percent-decoded exactly once:
//
//	POST B/hit/{slug}           200 {"slug":s,"views":N}
//	GET  B/get/{slug}           200 {"slug":s,"views":N}
//	GET  B/get?slugs=a,b,c      200 {"a":N,"b":M,"c":0}
//	POST B/download/{visitor}   200 {"allowed":true,"count":n} | 429 {"allowed":false,"count":n}
//	GET  B/quota/{visitor}      200 {"visitor":s,"day":"YYYY-MM-DD","count":n,"limit":5}
//	POST B/checkout/{item}      200 {"reserved":true} | 409 {"error":"being checked out",…}
//	GET  B/item/{item}          200 {"item":s,"stock":1,"claims":k}
//	POST B/limit/{caller}       200 {"allowed":true,"count":n,"window":w} | 429 {"allowed":false,…}
//	GET  B/limit/{caller}       200 {"caller":s,"window":w,"count":n,"limit":5} (?window=w)
//	POST B/subscribe/{subscriber}  200 {"subscriber":s,"plan":"paid"}
//	POST B/cancel/{subscriber}     200 {"subscriber":s,"plan":"cancelled"}
//	GET  B/plan/{subscriber}       200 {"subscriber":s,"paid":true|false} (as a page reads it: cached)
//	POST B/original/{subscriber}   200 {"granted":true,"count":n} | 403 no paid plan | 429 5 today
//	GET  B/original/{subscriber}   200 {"subscriber":s,"day":"YYYY-MM-DD","count":n,"limit":5}
//	errors                      400 bad key or limit, 404 unknown route, 405 wrong method,
//	                            501 a story the store does not play: {"error":…}
//
// A story's limit travels with its request: ?limit=L on download, limit
// and original, ?stock=K on checkout, 1 to 10000; without it the request
// means the contract's (5 a day, 5 a window, a stock of 1), so a service
// that keeps the contract's limit needs nothing new. The reads take the
// same parameter and answer it as their "limit" (or "stock"). A client
// sends it only when the story's limit is not the contract's; a mapping
// (Mapping) puts it in the route's {limit} ({stock}) when the
// template has one, filled always. The routes, which of them carry a
// limit, and the default are the ops table's (story.Ops). A rate limit's
// window length does not travel: it is the contract's 60 s.
//
// # An op of a story's own
//
// The ops table is a value (story.Table): a story with a request none of
// racelab's stories has adds its row (story.Ops().With) and hands the
// table to the client (Config.Ops) and to the handler (server.WithOps). The
// client then makes the op's request and read as the row says, staged or
// whole (story.Capped's Take and Taken); the handler serves them over a
// store that keeps capped counts (story.Capped, the actor's):
//
//	POST B/{op}/{key}?{limit}=L   200 {OK:true,Field:n} | the row's refusal {OK:false,Field:n}
//	GET  B/{read}/{key}           200 {Key:k,ReadField:n,Limit:L}
//
// with the names the row gives (a seat's: POST /reserve/{show}?seats=3,
// 409 when sold out, GET /seats/{show}). Nothing is registered anywhere
// else: a client or handler not handed the row does not know the op.
//
// The handler runs behind server.Server in racelab serve, which guards a
// server on a developer's machine.
//
// Every answer of the handler carries the instant the request was complete (its
// last byte read) in the Racelab-Arrival header, in Unix nanoseconds, so a
// client can tell how tightly a burst arrived; GET B/stats sums them per key.
//
// # Synchronized bursts
//
// A race only shows when requests truly overlap at the server. Client
// therefore stages every request of a burst before the engine's barrier
// and sends only its final part after it, on connections opened and warmed
// beforehand (Prepare), as its Sync says: h2 (single-packet HTTP/2),
// lastbyte (HTTP/1.1 last-byte) or none; SyncAuto picks h2 when the
// server speaks it. Package burst does the sending and says how. The
// requests of a burst are the story's own: the engine makes each with the
// story's request function, through the client's story methods, under
// the context of one call of the client's Gate, and the method stages its
// request there rather than send it whole (burst.StageCalls). A request
// answered before its final part was sent is marked Early: the burst was
// not synchronized and proves nothing.
//
// This package does not import racelab's targets package (which imports it):
// the store interfaces it serves and the Reply it stages are story's, the
// leaf both import, so any opened store fits the handler as it is.
package httpapi
