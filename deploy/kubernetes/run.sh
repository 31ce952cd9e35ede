#!/bin/sh
# Runs one sharded racelab run on the current kubectl context: the shards
# Job, then the verify Job, and prints the verdict. Needs kubectl and
# envsubst (gettext), and TARGET, the service as the pods reach it:
#
#   TARGET=http://shop.staging.svc:8787 IMAGE=registry.example/racelab:dev deploy/kubernetes/run.sh
#
# LEAD is how far ahead the start is set: long enough for every pod to be
# scheduled, pull the image and warm its connections. A shard that starts
# later still fires what is due, at once (a warning in its log), and the
# verify Job still runs: a burst it made late is inconclusive by its spread
# unless its counts prove the break.
#
# Exit codes are racelab's: the verify pod's own (0 as expected, 3 a rule
# broken, 1 could not judge, 2 parts that do not belong together); 1 also
# when a shard fails (its log is printed, and the run stops there: a
# retried or missing shard cannot make the burst whole) or a Job does not
# finish in time (SHARDS_TIMEOUT, VERIFY_TIMEOUT seconds).
set -eu
here=$(dirname "$0")
me=${0##*/}
: "${TARGET:?set TARGET to the service URL as the pods reach it}"
IMAGE=${IMAGE:-racelab:dev}
RUN_ID=${RUN_ID:-k$(date -u +%Y%m%d%H%M%S)}
LEAD=${LEAD:-60}
SHARDS_TIMEOUT=${SHARDS_TIMEOUT:-900}
VERIFY_TIMEOUT=${VERIFY_TIMEOUT:-600}
# Seconds between two looks at a Job.
POLL=${POLL:-5}
# One instant, computed once, for every shard (GNU date; on macOS: date -u -v+${LEAD}S ...).
START_AT=$(date -u -d "@$(($(date +%s) + LEAD))" +%Y-%m-%dT%H:%M:%SZ)
export TARGET IMAGE RUN_ID START_AT

# pods JOB [kubectl get flags...]: the Job's pods, by the label the Job
# controller gives them.
pods() {
	job=$1
	shift
	kubectl get pods -l "job-name=$job" "$@"
}

# finish JOB TIMEOUT: waits until JOB has completed (returns 0) or failed
# (returns 1). `kubectl wait --for=condition=complete` alone would sit out
# the whole timeout on a failed Job and say nothing of why. Past TIMEOUT
# seconds it prints the pods' state and the usual cause (a pod Pending on
# its volume), and exits 1.
finish() {
	job=$1
	deadline=$(($(date +%s) + $2))
	while :; do
		conditions=$(kubectl get "job/$job" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
		case " $conditions " in
		*" Complete "*) return 0 ;;
		*" Failed "* | *" FailureTarget "*) return 1 ;;
		esac
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "$me: job/$job did not finish in $2s; its pods:" >&2
			pods "$job" -o wide >&2 || true
			echo "$me: a pod Pending for long waits for its volume (kubectl describe pvc racelab-results) or for room in the cluster (kubectl describe pod -l job-name=$job)" >&2
			exit 1
		fi
		sleep "$POLL"
	done
}

kubectl apply -f "$here/results-pvc.yaml"
envsubst '${RUN_ID} ${START_AT} ${TARGET} ${IMAGE}' <"$here/shards-job.yaml" | kubectl apply -f -
echo "run $RUN_ID: 4 shards release at $START_AT"
if ! finish "racelab-shards-$RUN_ID" "$SHARDS_TIMEOUT"; then
	echo "$me: job/racelab-shards-$RUN_ID failed; no verdict without every shard. The failed pods' logs:" >&2
	for pod in $(pods "racelab-shards-$RUN_ID" --field-selector=status.phase=Failed -o name); do
		echo "== $pod" >&2
		kubectl logs "$pod" --tail=-1 >&2 || true
	done
	exit 1
fi
envsubst '${RUN_ID} ${START_AT} ${TARGET} ${IMAGE}' <"$here/verify-job.yaml" | kubectl apply -f -
# Complete or failed, the verify pod's log holds the table and the verdict,
# and its exit code is racelab's.
status=0
finish "racelab-verify-$RUN_ID" "$VERIFY_TIMEOUT" || status=$?
kubectl logs "job/racelab-verify-$RUN_ID" --tail=-1
if [ "$status" -ne 0 ]; then
	code=$(pods "racelab-verify-$RUN_ID" -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}')
	case $code in
	'' | 0 | *[!0-9]*) code=1 ;;
	esac
	exit "$code"
fi
