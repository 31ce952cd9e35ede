package story

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)

func TestAddWithoutRecorderIsANoOp(t *testing.T) {
	ctx := context.Background()
	if Tracing(ctx) || RecorderFrom(ctx) != nil {
		t.Fatal("a bare context reports a recorder")
	}
	Trace(ctx, Step{Op: OpRead}) // must not panic
	if n := testing.AllocsPerRun(100, func() { Trace(ctx, Step{At: t0, Op: OpRead, Key: "k"}) }); n != 0 {
		t.Errorf("Trace without a recorder allocates %v times, want 0", n)
	}
}

func TestRecorderKeepsOrderAndCopies(t *testing.T) {
	var r Recorder
	ctx := WithRecorder(context.Background(), &r)
	want := []Step{
		{At: t0, Op: OpRead, Key: "views:post", Value: "41", Note: "cache miss"},
		{At: t0.Add(time.Millisecond), Op: OpWrite, Key: "views:post", Value: "42"},
		{At: t0.Add(31 * time.Millisecond), Op: OpWriteLands, Key: "views:post", Value: "42", Note: "replaced 42"},
	}
	for _, s := range want {
		Trace(ctx, s)
	}
	got := r.Steps()
	if !slices.Equal(got, want) {
		t.Fatalf("Steps = %v, want %v", got, want)
	}
	got[0].Value = "changed"
	if r.Steps()[0].Value != "41" {
		t.Error("Steps returned the recorder's own slice")
	}
	if r.Len() != 3 {
		t.Errorf("Len = %d, want 3", r.Len())
	}
}

func TestRecorderConcurrentAdds(t *testing.T) {
	var r Recorder
	ctx := WithRecorder(context.Background(), &r)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				Trace(ctx, Step{Op: OpRead})
			}
		})
	}
	wg.Wait()
	if r.Len() != 800 {
		t.Errorf("Len = %d, want 800", r.Len())
	}
}

func TestStepString(t *testing.T) {
	tests := []struct {
		step Step
		want string
	}{
		{Step{Op: OpRead, Key: "views:post", Value: "41", Note: "cache miss"}, "read views:post = 41 (cache miss)"},
		{Step{Op: OpRead, Key: "k", Note: NotFound}, "read k (not found)"},
		{Step{Op: OpWrite, Key: "k", Value: "1"}, "write k = 1"},
	}
	for _, tt := range tests {
		if got := tt.step.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestFormatSteps(t *testing.T) {
	got := FormatSteps(t0, []Step{
		{At: t0, Op: OpRead, Key: "k", Value: "1"},
		{At: t0.Add(30 * time.Millisecond), Op: OpWriteLands, Key: "k", Value: "2", Note: "replaced 1"},
	})
	want := "        0s  read k = 1\n" +
		"      30ms  write-lands k = 2 (replaced 1)\n"
	if got != want {
		t.Errorf("FormatSteps =\n%s\nwant\n%s", got, want)
	}
}
