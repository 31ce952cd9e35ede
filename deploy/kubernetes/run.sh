#!/bin/sh
# Runs one sharded racelab run on the current kubectl context: the shards
# Job, then the verify Job, and prints the verdict. Needs kubectl and
# envsubst (gettext), and TARGET, the service as the pods reach it:
#
#   TARGET=http://shop.staging.svc:8787 IMAGE=registry.example/racelab:dev deploy/kubernetes/run.sh
#
# LEAD is how far ahead the start is set: long enough for every pod to be
# scheduled, pull the image and warm its connections. A shard that starts
# later still fires, at once, and the arrival spread in the report shows it.
set -eu
here=$(dirname "$0")
: "${TARGET:?set TARGET to the service URL as the pods reach it}"
IMAGE=${IMAGE:-racelab:dev}
RUN_ID=${RUN_ID:-k$(date -u +%Y%m%d%H%M%S)}
LEAD=${LEAD:-60}
# One instant, computed once, for every shard (GNU date; on macOS: date -u -v+${LEAD}S ...).
START_AT=$(date -u -d "@$(($(date +%s) + LEAD))" +%Y-%m-%dT%H:%M:%SZ)
export TARGET IMAGE RUN_ID START_AT

kubectl apply -f "$here/results-pvc.yaml"
envsubst '${RUN_ID} ${START_AT} ${TARGET} ${IMAGE}' < "$here/shards-job.yaml" | kubectl apply -f -
echo "run $RUN_ID: 4 shards release at $START_AT"
kubectl wait --for=condition=complete --timeout=15m "job/racelab-shards-$RUN_ID"
envsubst '${RUN_ID} ${START_AT} ${TARGET} ${IMAGE}' < "$here/verify-job.yaml" | kubectl apply -f -
# Complete or failed, the log holds the table and the verdict.
kubectl wait --for=condition=complete --timeout=10m "job/racelab-verify-$RUN_ID" || true
kubectl logs "job/racelab-verify-$RUN_ID"
test "$(kubectl get "job/racelab-verify-$RUN_ID" -o jsonpath='{.status.succeeded}')" = 1
