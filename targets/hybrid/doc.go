// Package hybrid is the split the seeds recommend when part of a job needs
// correctness: a strong store decides, a key-value store fans the result
// out. Its Store keeps a subscriber's daily quota in a simulated Durable
// Object (package actor), which decides every download exactly, and serves
// the subscriber's plan from a simulated KV namespace (package kv), cheap
// and cached, so a cancelled plan still reads "paid" for up to the plan
// read's cache TTL. Both run on one clock, virtual or real.
//
// It plays stale-plan only (story.Plans): the quota rule holds exactly,
// and the exposure after a cancel stays within the KV cache's bound.
package hybrid
