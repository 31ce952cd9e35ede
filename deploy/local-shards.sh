#!/bin/sh
# Runs a sharded racelab run on this machine, the way a cluster would, and
# prints the merged report next to one process's run of the same burst:
# `racelab serve`, then SHARDS racelab processes with one run id and one
# start instant, then `racelab verify`. `make bench-shards` runs it.
#
#   deploy/local-shards.sh [STORE] [N] [TRIALS]     (defaults: actor 100 30)
#
# The report's "arrival spread at the server" is measured by the server's
# own clock (Racelab-Arrival): across shards, then within one process.
set -eu
STORE=${1:-actor}
N=${2:-100}
TRIALS=${3:-30}
SHARDS=${SHARDS:-4}
RACELAB=${RACELAB:-bin/racelab}
dir=$(mktemp -d)
trap 'kill -INT $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$dir"' EXIT

"$RACELAB" serve --store "$STORE" --addr 127.0.0.1:0 --addr-file "$dir/addr" --quiet --max-conns 4096 &
serve=$!
while [ ! -s "$dir/addr" ]; do sleep 0.05; done
url=http://$(cat "$dir/addr")
# Three seconds ahead: time for every process to start, connect and stage.
start=$(date -u -d "@$(($(date +%s) + 3))" +%Y-%m-%dT%H:%M:%SZ)
i=0
pids=
while [ $i -lt "$SHARDS" ]; do
	"$RACELAB" run ten-hits-one-view -t "$url" -n "$N" --trials "$TRIALS" \
		--shard "$i/$SHARDS" --run-id "local$$" --start-at "$start" --shard-dir "$dir/parts" -q &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do wait "$p" || true; done
echo "== $SHARDS shards of $((N / SHARDS)) (one burst of $N), released at $start"
"$RACELAB" verify "$dir/parts" || true
echo
echo "== one process, bursts of $N"
"$RACELAB" run ten-hits-one-view -t "$url" -n "$N" --trials "$TRIALS" -q || true
