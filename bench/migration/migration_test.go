package migration

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestPairsAndVerdicts(t *testing.T) {
	small, big := Case{128, 0}, Case{512, 128}
	r := Result{Moves: []Move{
		{Side: Raw, Case: small, Total: 3 * time.Second, Downtime: 500 * time.Millisecond},
		{Side: Platform, Case: small, Error: "boom"},
		{Side: Platform, Case: small, Total: 6 * time.Second, Downtime: 600 * time.Millisecond},
		{Side: Raw, Case: big, Total: 7 * time.Second, Downtime: 3 * time.Second},
		{Side: Platform, Case: big, Total: 10500 * time.Millisecond, Downtime: 3700 * time.Millisecond},
	}}
	pairs := r.Pairs()
	if len(pairs) != 2 || pairs[0].Case != small || pairs[1].Case != big {
		t.Fatalf("pairs %+v", pairs)
	}
	// A failed move is replaced by the side's completed one.
	if d, tot, ok := pairs[0].Verdict(); !ok || !d || !tot {
		t.Errorf("small: downtime 1.2x and total +3 s met, got %v %v %v", d, tot, ok)
	}
	// 3.7 s > 1.2 x 3 s; 10.5 s > 7 s + 3 s.
	if d, tot, ok := pairs[1].Verdict(); !ok || d || tot {
		t.Errorf("big: both targets missed, got %v %v %v", d, tot, ok)
	}
	only := Result{Moves: []Move{{Side: Raw, Case: small, Total: time.Second, Downtime: time.Millisecond}}}
	if _, _, ok := only.Pairs()[0].Verdict(); ok {
		t.Error("a case with one side measured has a verdict")
	}
}

func TestWaitEndedRecordsPhases(t *testing.T) {
	w := watch.NewFake()
	mig := func(name string, p virtv1.VirtualMachineInstanceMigrationPhase) *virtv1.VirtualMachineInstanceMigration {
		return &virtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: virtv1.VirtualMachineInstanceMigrationStatus{Phase: p}}
	}
	go func() {
		w.Add(mig("m", ""))
		w.Modify(mig("other", virtv1.MigrationFailed))
		w.Modify(mig("m", virtv1.MigrationPending))
		w.Modify(mig("m", virtv1.MigrationPending))
		w.Modify(mig("m", virtv1.MigrationRunning))
		w.Modify(mig("m", virtv1.MigrationSucceeded))
	}()
	var seen []string
	got, err := waitEnded(context.Background(), w, "m", time.Minute, func(p string) { seen = append(seen, p) })
	if err != nil || got.Status.Phase != virtv1.MigrationSucceeded {
		t.Fatalf("waitEnded = %v, %v", got, err)
	}
	if want := []string{"(none)", "Pending", "Running", "Succeeded"}; !slices.Equal(seen, want) {
		t.Errorf("phases %v, want %v", seen, want)
	}
	w2 := watch.NewFake()
	go w2.Delete(mig("m", virtv1.MigrationRunning))
	if _, err := waitEnded(context.Background(), w2, "m", time.Minute, func(string) {}); err == nil {
		t.Error("a deleted migration ended well")
	}
}

// Several runs: each side is judged by its median total and downtime.
func TestPairsTakeMedians(t *testing.T) {
	c := Case{128, 0}
	r := Result{Moves: []Move{
		{Side: Raw, Case: c, Total: 3 * time.Second, Downtime: 300 * time.Millisecond},
		{Side: Platform, Case: c, Total: 4 * time.Second, Downtime: 700 * time.Millisecond},
		{Side: Raw, Case: c, Total: 4 * time.Second, Downtime: 600 * time.Millisecond},
		{Side: Platform, Case: c, Total: 9 * time.Second, Downtime: 650 * time.Millisecond},
		{Side: Raw, Case: c, Total: 2 * time.Second, Downtime: 620 * time.Millisecond},
		{Side: Platform, Case: c, Total: 5 * time.Second, Downtime: 600 * time.Millisecond},
	}}
	p := r.Pairs()[0]
	if p.Raw.Total != 3*time.Second || p.Raw.Downtime != 600*time.Millisecond ||
		p.Platform.Total != 5*time.Second || p.Platform.Downtime != 650*time.Millisecond {
		t.Errorf("medians: raw %v/%v platform %v/%v", p.Raw.Total, p.Raw.Downtime, p.Platform.Total, p.Platform.Downtime)
	}
	if d, tot, ok := p.Verdict(); !ok || !d || !tot {
		t.Errorf("verdict %v %v %v, want both met on the medians", d, tot, ok)
	}
}
