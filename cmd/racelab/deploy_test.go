package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The manifests' placeholders, as run.sh fills them in.
var manifestVars = map[string]string{
	"RUN_ID":   "k20260501120000",
	"START_AT": "2026-05-01T12:01:00Z",
	"TARGET":   "http://shop.staging.svc:8787",
	"IMAGE":    "racelab:dev",
}

// readManifest reads a manifest of deploy/kubernetes with its placeholders
// filled in, strictly into v: a field the Kubernetes API does not have
// (a typo, a field at the wrong level) fails the test.
func readManifest(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	filled := os.Expand(string(b), func(k string) string {
		v, ok := manifestVars[k]
		if !ok {
			t.Errorf("%s: unknown placeholder ${%s}", name, k)
		}
		return v
	})
	if err := yaml.UnmarshalStrict([]byte(filled), v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// parseArgs parses a container's args with racelab's own command, through
// its test seam, so that the manifests can only give flags racelab takes.
func parseArgs(t *testing.T, args []string) (runOpts *runOptions, verifyOpts *verifyOptions) {
	t.Helper()
	s, _, _ := testStreams("")
	root := &cobra.Command{Use: "racelab", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(
		newRunCmd(s, testCatalog, func(o *runOptions) error { runOpts = o; return nil }),
		newVerifyCmd(s, testCatalog, func(o *verifyOptions) error { verifyOpts = o; return nil }))
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("racelab %s: %v", strings.Join(args, " "), err)
	}
	return runOpts, verifyOpts
}

// The Kubernetes manifests are checked for structure offline: each is a
// valid object of its kind, the shards Job is an Indexed Job with one pod
// per shard and --shard auto/N agreeing with it, every pod gets the same
// run id and start, and the verify Job reads the folder the shards write.
func TestKubernetesManifests(t *testing.T) {
	var pvc corev1.PersistentVolumeClaim
	readManifest(t, "results-pvc.yaml", &pvc)
	if pvc.Kind != "PersistentVolumeClaim" || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("results volume: kind %q, access %v; want a ReadWriteMany claim every pod can mount", pvc.Kind, pvc.Spec.AccessModes)
	}

	var shards, verify batchv1.Job
	readManifest(t, "shards-job.yaml", &shards)
	readManifest(t, "verify-job.yaml", &verify)
	for name, j := range map[string]*batchv1.Job{"shards": &shards, "verify": &verify} {
		pod := j.Spec.Template.Spec
		switch {
		case j.APIVersion != "batch/v1" || j.Kind != "Job":
			t.Errorf("%s: %s %s; want batch/v1 Job", name, j.APIVersion, j.Kind)
		case pod.RestartPolicy != corev1.RestartPolicyNever || j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0:
			t.Errorf("%s: restart %q, backoff %v; a retried pod would miss the agreed instant: want Never and 0", name, pod.RestartPolicy, j.Spec.BackoffLimit)
		case len(pod.Containers) != 1 || len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil ||
			pod.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name:
			t.Fatalf("%s: want one container and the results claim %q as its one volume", name, pvc.Name)
		}
	}

	spec := shards.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("shards: completion mode %v; want Indexed, which sets JOB_COMPLETION_INDEX", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		t.Fatalf("shards: completions %v, parallelism %v; want them equal, every shard at once", spec.Completions, spec.Parallelism)
	}
	c := spec.Template.Spec.Containers[0]
	o, _ := parseArgs(t, c.Args)
	if o == nil {
		t.Fatalf("shards: args %v do not run racelab run", c.Args)
	}
	if want := "auto/" + strconv.Itoa(int(*spec.Completions)); o.Shard.Shard != want {
		t.Errorf("shards: --shard %q; want %q, as many shards as pods", o.Shard.Shard, want)
	}
	if o.Shard.RunID != manifestVars["RUN_ID"] || o.Shard.StartAt != manifestVars["START_AT"] || len(o.Targets) != 1 || o.Targets[0] != manifestVars["TARGET"] {
		t.Errorf("shards: run id %q, start %q, targets %v; want the ones run.sh computes once", o.Shard.RunID, o.Shard.StartAt, o.Targets)
	}
	mount := c.VolumeMounts[0].MountPath
	if !strings.HasPrefix(o.Shard.Dir, mount+"/") {
		t.Errorf("shards: --shard-dir %q is not on the results volume (%s)", o.Shard.Dir, mount)
	}

	vc := verify.Spec.Template.Spec.Containers[0]
	_, v := parseArgs(t, vc.Args)
	if v == nil || len(v.Files) != 1 || v.Files[0] != strings.Replace(o.Shard.Dir, mount, vc.VolumeMounts[0].MountPath, 1) {
		t.Errorf("verify: args %v; want racelab verify of the folder the shards write (%s)", vc.Args, o.Shard.Dir)
	}
}

// fakeKubectl plays a cluster's answers to run.sh, for its control flow
// only: which Jobs it creates, what it waits for, whose log it prints and
// which exit it gives. The FAKE_* variables say how each Job ends: its
// true conditions (FAKE_shards, FAKE_verify; Complete by default) from its
// FAKE_*_AFTER-th look on, and the verify pod's exit code. Pods answer
// only to the label the Job controller gives them (job-name=JOB) of a Job
// that was applied, so a selector that names another label finds nothing.
const fakeKubectl = `#!/bin/sh
d=$FAKE_KUBECTL
echo "$*" >>"$d/calls"
selected() {
	for a; do case $a in job-name=*) echo "${a#job-name=}" ;; esac; done
}
applied() { grep -q "^  name: $1\$" "$d/applied" 2>/dev/null; }
case $1 in
apply)
	if [ "$3" = - ]; then cat >>"$d/applied"; else cat "$3" >>"$d/applied"; fi
	echo "applied"
	;;
get)
	case $2 in
	job/*)
		job=${2#job/}
		applied "$job" || { echo "Error from server (NotFound): jobs.batch \"$job\" not found" >&2; exit 1; }
		kind=shards
		case $job in racelab-verify-*) kind=verify ;; esac
		n=$(($(cat "$d/polls-$kind" 2>/dev/null || echo 0) + 1))
		echo $n >"$d/polls-$kind"
		eval "after=\${FAKE_${kind}_AFTER:-1} final=\${FAKE_${kind}:-Complete}"
		if [ "$n" -ge "$after" ]; then printf '%s ' $final; fi
		;;
	pods)
		job=$(selected "$@")
		applied "$job" || exit 0
		kind=shards
		case $job in racelab-verify-*) kind=verify ;; esac
		eval "final=\${FAKE_${kind}:-Complete}"
		case "$*" in
		*status.phase=Failed*) case $final in *Fail*) echo "pod/$job-1-x7k2p" ;; esac ;;
		*exitCode*) printf '%s' "$FAKE_VERIFY_EXIT" ;;
		*"-o wide"*) printf 'NAME READY STATUS\n%s-0-abcde 0/1 Pending\n' "$job" ;;
		*"-o name"*) echo "pod/$job-0-abcde" ;;
		*) echo "fake kubectl: get $* is not played" >&2; exit 1 ;;
		esac
		;;
	*) echo "fake kubectl: get $2 is not played" >&2; exit 1 ;;
	esac
	;;
logs)
	case $2 in
	pod/racelab-shards-*-1-x7k2p) echo "racelab: write shard part: open /results/k1/shard-1-of-4.json: permission denied" ;;
	job/racelab-verify-*) echo "| TARGET | ALLOWED | COUNTED | VERDICT (the verify pod's table)" ;;
	*) echo "error: no pod $2" >&2; exit 1 ;;
	esac
	;;
*) echo "fake kubectl: $* is not played" >&2; exit 1 ;;
esac
`

// runRunSh runs deploy/kubernetes/run.sh with the fake kubectl and env,
// and returns its exit code, streams and the fake's record.
func runRunSh(t *testing.T, env ...string) (code int, stdout, stderr, calls, applied string) {
	t.Helper()
	bin, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang fails, not the whole suite
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join("..", "..", "deploy", "kubernetes", "run.sh"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_KUBECTL="+state,
		"TARGET=http://shop.staging.svc:8787", "IMAGE=registry.example/racelab:dev", "RUN_ID=k1", "POLL=0")
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("run.sh %v did not end in a minute\nstderr: %s", env, errOut.String())
	}
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(state, name)); return string(b) }
	return code, out.String(), errOut.String(), read("calls"), read("applied")
}

// run.sh stops at a failed shard with that pod's log, gives the verify
// pod's own exit code, and says what it waited for when a Job never ends.
func TestKubernetesRunScript(t *testing.T) {
	if _, err := exec.LookPath("envsubst"); err != nil {
		t.Fatal("run.sh needs envsubst: apt-get install gettext-base (.ci/run does)")
	}
	for _, tc := range []struct {
		name   string
		env    []string
		code   int
		stdout []string
		stderr []string
		verify bool // whether the verify Job is created
		polls  string
	}{
		{"all complete", nil, 0, []string{"run k1: 4 shards release at", "the verify pod's table"}, nil, true, "1\n"},
		{"a shard fails on the second look", []string{"FAKE_shards=FailureTarget Failed", "FAKE_shards_AFTER=2"}, 1, nil,
			[]string{"job/racelab-shards-k1 failed", "== pod/racelab-shards-k1-1-x7k2p", "permission denied"}, false, "2\n"},
		{"a shard fails, FailureTarget first", []string{"FAKE_shards=FailureTarget"}, 1, nil,
			[]string{"permission denied"}, false, "1\n"},
		{"the rule broke", []string{"FAKE_verify=FailureTarget Failed", "FAKE_VERIFY_EXIT=3"}, 3,
			[]string{"the verify pod's table"}, nil, true, "1\n"},
		{"verify failed without an exit code", []string{"FAKE_verify=Failed", "FAKE_VERIFY_EXIT="}, 1,
			[]string{"the verify pod's table"}, nil, true, "1\n"},
		{"the shards never end", []string{"FAKE_shards_AFTER=1000", "SHARDS_TIMEOUT=0"}, 1, nil,
			[]string{"did not finish in 0s", "Pending", "kubectl describe pvc racelab-results"}, false, "1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr, calls, applied := runRunSh(t, tc.env...)
			if code != tc.code {
				t.Errorf("exit %d; want %d\nstdout: %s\nstderr: %s\ncalls: %s", code, tc.code, stdout, stderr, calls)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout %q; want %q", stdout, w)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q; want %q", stderr, w)
				}
			}
			if got := strings.Contains(applied, "name: racelab-verify-k1"); got != tc.verify {
				t.Errorf("verify Job created: %t; want %t\ncalls: %s", got, tc.verify, calls)
			}
			if strings.Contains(applied, "${") || !strings.Contains(applied, "--target=http://shop.staging.svc:8787") ||
				!strings.Contains(applied, "image: registry.example/racelab:dev") {
				t.Errorf("the manifests were applied with placeholders left or wrong:\n%s", applied)
			}
			// The shards are looked at as often as they take to end, and
			// no more: a failure is seen at the first look that shows it.
			if n := strings.Count(calls, "get job/racelab-shards-k1"); strconv.Itoa(n)+"\n" != tc.polls && tc.name != "the shards never end" {
				t.Errorf("looked at the shards Job %d times; want %s", n, strings.TrimSpace(tc.polls))
			}
		})
	}
}

// labelsOf is the labels the Job controller gives a Job's pods: the pod
// template's, and the Job's name.
func labelsOf(j *batchv1.Job) map[string]string {
	l := map[string]string{"job-name": j.Name, "batch.kubernetes.io/job-name": j.Name}
	for k, v := range j.Spec.Template.Labels {
		l[k] = v
	}
	return l
}

// The selector the README and `verify --help` give for collecting the
// parts from the pods' logs picks every shard's pod and not the verify
// pod, whose log is a table, not a part.
func TestPartsFromLogsSelector(t *testing.T) {
	var shards, verify batchv1.Job
	readManifest(t, "shards-job.yaml", &shards)
	readManifest(t, "verify-job.yaml", &verify)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	help := newVerifyCmd(Streams{}, testCatalog, nil).Example
	selector := regexp.MustCompile("kubectl logs -l\\s+([^\\s`]+)")
	for where, text := range map[string]string{"README.md": string(readme), "verify --help": help} {
		found := selector.FindAllStringSubmatch(text, -1)
		if len(found) == 0 {
			t.Errorf("%s: no `kubectl logs -l SELECTOR`", where)
		}
		for _, m := range found {
			sel := strings.ReplaceAll(m[1], "RUN_ID", manifestVars["RUN_ID"])
			matches := func(labels map[string]string) bool {
				for _, term := range strings.Split(sel, ",") {
					k, v, ok := strings.Cut(term, "=")
					if !ok || labels[k] != v {
						return false
					}
				}
				return true
			}
			if !matches(labelsOf(&shards)) || matches(labelsOf(&verify)) {
				t.Errorf("%s: -l %s; want a selector of the shards' pods (job-name=%s) that leaves out the verify pod", where, m[1],
					strings.ReplaceAll(shards.Name, manifestVars["RUN_ID"], "RUN_ID"))
			}
		}
	}
}

// local-shards.sh without a racelab binary, or with a server that cannot
// start, says so and ends; with one, it serves, fires, merges and
// compares.
func TestLocalShardsScript(t *testing.T) {
	script := filepath.Join("..", "..", "deploy", "local-shards.sh")
	run := func(racelab string, args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a hang fails, not the whole suite
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "RACELAB="+racelab, "GORACE=atexit_sleep_ms=0")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		_ = cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("local-shards.sh %v with RACELAB=%s did not end\nstderr: %s", args, racelab, errOut.String())
		}
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	missing := filepath.Join(t.TempDir(), "bin", "racelab")
	if code, _, stderr := run(missing); code != exitUsage || !strings.Contains(stderr, "make build") || !strings.Contains(stderr, missing) {
		t.Errorf("no binary: exit %d, stderr %q; want 2, naming the path and make build", code, stderr)
	}
	if code, _, stderr := run(racelabBinary(t), "sqlite", "many"); code != exitUsage || !strings.Contains(stderr, "N=many") {
		t.Errorf("N=many: exit %d, stderr %q; want 2, naming it", code, stderr)
	}
	if code, _, stderr := run(racelabBinary(t), "nosuch", "8", "2"); code != exitFailure || !strings.Contains(stderr, "exited before it listened") {
		t.Errorf("a store serve refuses: exit %d, stderr %q; want 1, saying the server ended", code, stderr)
	}
	code, stdout, stderr := run(racelabBinary(t), "sqlite", "8", "2")
	if code != exitOK || !strings.Contains(stdout, "== 4 shards of 2 (one burst of 8)") || strings.Count(stdout, "holds in 2/2") != 2 {
		t.Errorf("sqlite: exit %d; want both runs holding\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}
