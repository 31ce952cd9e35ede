// Package shards is racelab's sharding: one run or load split over
// several processes or machines (racelab run|load --shard I/N), and the
// merge that puts their parts back together (racelab verify).
//
// A shard plays its share (RunShard: its share of every trial's burst,
// released at agreed instants; LoadShard: its share of a load's workers,
// requests or rate) from an agreed start (ParseStartAt, CheckStartAt),
// with no read-back and no verdict, since no shard sees a whole burst or
// a whole key, and writes its part (results.ShardResult). VerifyRun and
// VerifyLoad take every part of one run: each trial's requests from every
// shard make one burst again, every key is read back against the target,
// and each trial or key is judged by the story's own rule, as one process
// would have judged it; the verdict is the verifier's, never a part's.
// CheckShard and CheckLoad check a part or a load document from outside
// against what racelab and its story can produce before anything is
// merged from it.
package shards
