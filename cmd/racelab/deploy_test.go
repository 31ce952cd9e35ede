package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

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
		newRunCmd(s, testCatalog, func(_ *cobra.Command, o *runOptions) error { runOpts = o; return nil }),
		newVerifyCmd(s, testCatalog, func(_ *cobra.Command, o *verifyOptions) error { verifyOpts = o; return nil }))
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

// The CI matrix example has one job per shard, the shard's index taken
// from the matrix, and a merge job after them.
func TestCIMatrixExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "ci", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Needs    any `json:"needs"`
			Strategy struct {
				Matrix struct {
					Shard []int `json:"shard"`
				} `json:"matrix"`
			} `json:"strategy"`
			Steps []struct {
				Run string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	shard, verify := wf.Jobs["shard"], wf.Jobs["verify"]
	n := len(shard.Strategy.Matrix.Shard)
	for i, s := range shard.Strategy.Matrix.Shard {
		if s != i {
			t.Errorf("matrix shard %d is %d; want 0 to %d", i, s, n-1)
		}
	}
	var fires, verifies bool
	for _, st := range shard.Steps {
		fires = fires || strings.Contains(st.Run, "--shard ${{ matrix.shard }}/"+strconv.Itoa(n)) && strings.Contains(st.Run, "needs.plan.outputs.start-at")
	}
	for _, st := range verify.Steps {
		verifies = verifies || strings.Contains(st.Run, "racelab verify parts")
	}
	if n < 2 || !fires || !verifies || verify.Needs != "shard" || shard.Needs != "plan" {
		t.Errorf("want a plan job, %d shard jobs each firing --shard I/%d at the planned start, and a verify job after them", n, n)
	}
}
