// Package storetest is the test support that racelab's store packages
// (redis, postgres, sqlite, actor, kv) share: the one copy of what each of
// their tests needs to race a store and check the result.
//
// It holds
//
//   - the story interfaces (Counter, Quota, Inventory, Plans: package
//     story's, under the same names), Preparer, Store for the counter, the
//     quota and the item together, and Local and ServerStore for a whole
//     store, so that a store's test can assert at compile time that the
//     store keeps fitting them;
//   - Burst, which releases n goroutines together by closing one channel;
//   - Key, a name no earlier round, test or test process has used;
//   - URL, Unreachable and OpenServer for the tests that need a real server:
//     the server an environment variable names, and a skip, or under CI=true
//     a failure, when it does not answer;
//   - ClosedAddr, a loopback address where nothing listens, and Clock, a
//     settable clock for a store's Now;
//   - the conformance checks, which take the store a test opened with its
//     own strategy and configuration. Hits, Downloads and Checkouts run one
//     burst of a story on one key and return its Outcome. CounterExact,
//     QuotaExact, InventoryExact and Holds (the three together) fail at the
//     first round in which a strategy that must hold lost an update;
//     CounterLoses, QuotaLoses, InventoryLoses and LosesUpdates (the three
//     together) fail unless a naive strategy showed the race in Some, Most
//     or All of its rounds. QuotaDayRollsOver and QuotaDays check that the
//     quota's day ends at midnight UTC. LimitsAtTheEdge asks each limit a
//     store keeps for one request past it; PlansExact, PlansStale and
//     PlansDayRollsOver hold a subscription store to stale-plan's rules;
//     Kit runs the checks every real-server store (redis, postgres) shares.
//   - the answer checks, for strategies that must hold under their own
//     story's contention: CounterAnswers, QuotaAnswers, InventoryAnswers and
//     AnswersEveryRequest (the three together) run each story at its own N
//     (CounterN, QuotaN, InventoryN), every request bounded by
//     RequestTimeout as a run bounds it, count every errored request rather
//     than stopping at the first, and fail unless none errored: an errored
//     request proves nothing, so a strategy that "holds" by giving up under
//     contention must fail them.
//
// # Why it exists
//
// The store packages know nothing of racelab's engine: the targets package
// imports them to open their stores, so neither they nor their in-package
// tests can import it without a cycle. Each of them therefore grew its own
// copy of the interfaces, the burst, the key generator, the server skip and
// the conformance tests, and the copies drifted apart in small ways. This
// package gives them one copy to share. It is a normal package so that
// several packages' tests can import it, and for the same reason as theirs
// it imports only what the stores themselves import (package story, clock
// and targets/internal/server) besides the standard library (testing
// included): nothing but tests should import it.
//
// Each test still chooses its own rounds, burst size and threshold, so that
// every store keeps its own figures; the package only holds what the
// figures are checked with. Its own tests run the checks on an in-memory
// store, once holding and once naive, to show that every check can fail.
package storetest
