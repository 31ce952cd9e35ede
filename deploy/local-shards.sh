#!/bin/sh
# Runs a sharded racelab run on this machine, the way a cluster would, and
# prints the merged report next to one process's run of the same burst:
# `racelab serve`, then SHARDS racelab processes with one run id and one
# start instant, then `racelab verify`. `make bench-shards` runs it.
#
#   deploy/local-shards.sh [STORE] [N] [TRIALS]     (defaults: actor 100 30)
#
# RACELAB is the binary (default bin/racelab: `make build` makes it).
# The report's "arrival spread at the server" is measured by the server's
# own clock (Racelab-Arrival): across shards, then within one process.
set -eu
STORE=${1:-actor}
N=${2:-100}
TRIALS=${3:-30}
SHARDS=${SHARDS:-4}
RACELAB=${RACELAB:-bin/racelab}
me=${0##*/}

for v in "$N" "$TRIALS" "$SHARDS"; do
	case $v in
	'' | *[!0-9]* | 0)
		echo "$me: N, TRIALS and SHARDS are whole numbers above 0 (got N=$N TRIALS=$TRIALS SHARDS=$SHARDS); usage: $me [STORE] [N] [TRIALS]" >&2
		exit 2
		;;
	esac
done
# Without this, a missing binary only shows as a shell's "not found", and
# the wait for the server's address below would never end.
if ! command -v "$RACELAB" >/dev/null 2>&1; then
	echo "$me: no racelab at $RACELAB: run 'make build' first, or set RACELAB to a racelab binary" >&2
	exit 2
fi

dir=$(mktemp -d)
serve=
trap 'if [ -n "$serve" ]; then kill -INT "$serve" 2>/dev/null; wait "$serve" 2>/dev/null; fi; rm -rf "$dir"' EXIT

"$RACELAB" serve --store "$STORE" --addr 127.0.0.1:0 --addr-file "$dir/addr" --quiet --max-conns 4096 &
serve=$!
# The server writes its address once it listens; if it exits first (a
# bad store, say: its error is on stderr above), waiting longer is futile.
tries=0
while [ ! -s "$dir/addr" ]; do
	if ! kill -0 "$serve" 2>/dev/null; then
		serve=
		echo "$me: racelab serve --store $STORE exited before it listened" >&2
		exit 1
	fi
	tries=$((tries + 1))
	if [ "$tries" -gt 600 ]; then
		echo "$me: racelab serve --store $STORE wrote no address in 30s" >&2
		exit 1
	fi
	sleep 0.05
done
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
