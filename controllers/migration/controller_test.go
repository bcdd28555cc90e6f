package migration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/internal/finalizer"
)

func phaseOf(f *fixture, name string) virtv1.VirtualMachineInstanceMigrationPhase {
	f.t.Helper()
	return f.migration(name).Status.Phase
}

func wantPhase(t *testing.T, f *fixture, name string, want virtv1.VirtualMachineInstanceMigrationPhase) {
	t.Helper()
	if got := phaseOf(f, name); got != want {
		m := f.migration(name)
		t.Fatalf("migration %s is %q, want %q (conditions %+v)", name, got, want, m.Status.Conditions)
	}
}

// TestHappyPath walks a migration through every phase, the nodes' handlers
// played by status writes.
func TestHappyPath(t *testing.T) {
	vmi := runningVMI("vm1", "node1")
	f := newFixture(t, Config{}, node("node1"), node("node2"), vmi, sourcePod(vmi), newMigration("mig", "vm1"))

	f.syncMigration("mig")
	if !finalizer.Has(f.migration("mig"), virtv1.MigrationFinalizer) {
		t.Fatalf("migration %+v lacks the finalizer", f.migration("mig").ObjectMeta)
	}
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationPending)
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationScheduling)
	target := launcherpod.TargetName(vmi, "uid-mig")
	pod := f.pod(target)
	if pod == nil {
		t.Fatal("no target pod")
	}
	if uid, _ := launcherpod.IsTarget(pod); uid != "uid-mig" || !slices.Contains(pod.Spec.Containers[0].Args, launcherpod.MigrationTargetArg) {
		t.Errorf("target pod labels %v args %v", pod.Labels, pod.Spec.Containers[0].Args)
	}
	if terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; terms[0].MatchFields[0].Values[0] != "node1" {
		t.Errorf("target pod not kept off the source node: %+v", terms)
	}
	if !hasEvent(f.events(), "Normal "+ReasonTargetPodCreated) {
		t.Error("no MigrationTargetPodCreated event")
	}

	f.bind(target, "node2")
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationScheduled)

	f.ready(target)
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationPreparingTarget)
	ms := f.vmi("vm1").Status.MigrationState
	targetUID := f.pod(target).UID
	if ms == nil || ms.MigrationUID != "uid-mig" || ms.SourceNode != "node1" || ms.SourcePod != launcherpod.Name(vmi) ||
		ms.TargetNode != "node2" || ms.TargetPod != target || ms.MigrationConfiguration == nil ||
		*ms.MigrationConfiguration.CompletionTimeoutPerGiB != 150 {
		t.Fatalf("VMI migrationState %+v", ms)
	}
	if got := f.vmi("vm1").Status.ActivePods; len(got) != 2 || got[targetUID] != "node2" {
		t.Errorf("activePods %v, want the source and the target", got)
	}

	f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState.TargetNodeAddress = "198.18.0.12" })
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationTargetReady)

	f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) {
		s.MigrationState.StartTimestamp = ptr.To(metav1.NewTime(f.clock.Now()))
	})
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationRunning)

	f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) {
		s.MigrationState.Completed = true
		s.MigrationState.DowntimeMilliseconds = 180
		s.NodeName = "node2"
	})
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationSucceeded)
	if got := f.migration("mig").Status.MigrationState; got == nil || !got.Completed || got.DowntimeMilliseconds != 180 {
		t.Errorf("migration's migrationState %+v, want the VMI's", got)
	}
	f.syncMigration("mig") // the ended migration's clean-up
	if f.pod(launcherpod.Name(vmi)) != nil {
		t.Error("the source pod is still there")
	}
	if f.pod(target) == nil {
		t.Error("the target pod was deleted")
	}
	if got := f.vmi("vm1").Status.ActivePods; len(got) != 1 || got[targetUID] != "node2" {
		t.Errorf("activePods %v, want only the target", got)
	}
	var phases []virtv1.VirtualMachineInstanceMigrationPhase
	for _, p := range f.migration("mig").Status.PhaseTransitionTimestamps {
		phases = append(phases, p.Phase)
	}
	want := []virtv1.VirtualMachineInstanceMigrationPhase{virtv1.MigrationPending, virtv1.MigrationScheduling, virtv1.MigrationScheduled,
		virtv1.MigrationPreparingTarget, virtv1.MigrationTargetReady, virtv1.MigrationRunning, virtv1.MigrationSucceeded}
	if !slices.Equal(phases, want) {
		t.Errorf("phase transitions %v, want %v", phases, want)
	}
	events := f.events()
	if !hasEvent(events, "Normal "+ReasonMigrated) || !hasEvent(events, "Normal "+ReasonSourcePodDeleted) {
		t.Errorf("events %v lack Migrated and SourcePodDeleted", events)
	}
}

// TestSourceReportsFailure: the guest stays; the target pod goes.
func TestSourceReportsFailure(t *testing.T) {
	f, vmi, target := handedOverFixture(t)
	wantPhase(t, f, "mig", virtv1.MigrationPreparingTarget)
	f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) {
		s.MigrationState.StartTimestamp = ptr.To(metav1.NewTime(f.clock.Now()))
		s.MigrationState.Failed = true
		s.MigrationState.FailureReason = "migration job failed: connection reset"
	})
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationFailed)
	if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c == nil || c.Reason != virtv1.MigrationReasonJobFailed {
		t.Errorf("failed condition %+v", c)
	}
	f.syncMigration("mig")
	if f.pod(target) != nil || f.pod(launcherpod.Name(vmi)) == nil {
		t.Error("want the target pod gone and the source pod kept")
	}
	if got := f.vmi("vm1").Status.ActivePods; len(got) != 1 || got["src-vm1"] != "node1" {
		t.Errorf("activePods %v, want only the source", got)
	}
	if !hasEvent(f.events(), "Warning "+ReasonMigrationFailed) {
		t.Error("no MigrationFailed event")
	}
}

// TestVMICacheBehindTheHandOver: the migration's phase can reach the cache
// before the VMI that the hand-over wrote; the migration does not fail on
// the stale VMI, and does fail when the API's VMI lost the state too.
func TestVMICacheBehindTheHandOver(t *testing.T) {
	f, _, _ := handedOverFixture(t)
	wantPhase(t, f, "mig", virtv1.MigrationPreparingTarget)
	// What the cache held before the hand-over's write arrived.
	stale := f.vmi("vm1")
	stale.Status.MigrationState = nil

	syncOnStaleVMI := func() {
		t.Helper()
		f.refresh()
		f.must(f.stores[1].store.Update(stale))
		_, err := f.ctrl.sync(t.Context(), "ns/mig")
		f.must(err)
	}
	syncOnStaleVMI()
	wantPhase(t, f, "mig", virtv1.MigrationPreparingTarget)

	f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState = nil })
	syncOnStaleVMI()
	wantPhase(t, f, "mig", virtv1.MigrationFailed)
	if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c == nil || c.Reason != reasonStateLost {
		t.Errorf("failed condition %+v, want %s", c, reasonStateLost)
	}
}

// TestTargetTimeouts: an unschedulable target pod fails the migration after
// the unschedulable timeout, a target never ready after the pending one;
// the guest is not touched.
func TestTargetTimeouts(t *testing.T) {
	cfg := DefaultConfig(testPodConfig)
	cfg.UnschedulableTimeout, cfg.PendingTimeout = 30*time.Second, 90*time.Second
	t.Run("unschedulable", func(t *testing.T) {
		vmi := runningVMI("vm1", "node1")
		f := newFixture(t, cfg, node("node1"), node("node2"), vmi, sourcePod(vmi), newMigration("mig", "vm1", inPhase(virtv1.MigrationPending)))
		f.syncMigration("mig")
		target := launcherpod.TargetName(vmi, "uid-mig")
		p := f.pod(target)
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/2 nodes are available", LastTransitionTime: metav1.NewTime(f.clock.Now())}}
		f.updatePod(p)
		if after := f.syncMigration("mig"); after != 30*time.Second {
			t.Errorf("recheck after %s, want the timeout's 30s", after)
		}
		f.clock.Step(29 * time.Second)
		f.syncMigration("mig")
		wantPhase(t, f, "mig", virtv1.MigrationScheduling)
		f.clock.Step(time.Second)
		f.syncMigration("mig")
		wantPhase(t, f, "mig", virtv1.MigrationFailed)
		if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c.Reason != virtv1.MigrationReasonTargetUnschedulable {
			t.Errorf("reason %q", c.Reason)
		}
		f.syncMigration("mig")
		if f.pod(target) != nil {
			t.Error("the target pod is still there")
		}
		if v := f.vmi("vm1"); v.Status.MigrationState != nil || v.Status.NodeName != "node1" || len(v.Status.ActivePods) != 1 {
			t.Errorf("the VMI was touched: %+v", v.Status)
		}
	})
	t.Run("never ready", func(t *testing.T) {
		vmi := runningVMI("vm1", "node1")
		f := newFixture(t, cfg, node("node1"), node("node2"), vmi, sourcePod(vmi), newMigration("mig", "vm1", inPhase(virtv1.MigrationPending)))
		f.syncMigration("mig")
		f.bind(launcherpod.TargetName(vmi, "uid-mig"), "node2")
		f.syncMigration("mig")
		wantPhase(t, f, "mig", virtv1.MigrationScheduled)
		f.clock.Step(90 * time.Second)
		f.syncMigration("mig")
		wantPhase(t, f, "mig", virtv1.MigrationFailed)
		if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c.Reason != virtv1.MigrationReasonTargetNotReady {
			t.Errorf("reason %q", c.Reason)
		}
	})
}

// TestLimits: six migrations at once, five start; two per source node.
func TestLimits(t *testing.T) {
	objs := []runtime.Object{node("spare"), node("n1"), node("n2"), node("n3"), node("n4"), node("n5")}
	for i, nodeName := range []string{"n1", "n1", "n1", "n2", "n3", "n4", "n5"} {
		name := string(rune('a' + i))
		vmi := runningVMI(name, nodeName)
		objs = append(objs, vmi, sourcePod(vmi), newMigration("mig-"+name, name, inPhase(virtv1.MigrationPending),
			func(m *virtv1.VirtualMachineInstanceMigration) {
				m.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(i) * time.Second))
			}))
	}
	f := newFixture(t, Config{}, objs...)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		f.syncMigration("mig-" + n)
	}
	var started []string
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		if phaseOf(f, "mig-"+n) == virtv1.MigrationScheduling {
			started = append(started, n)
		}
	}
	// c is the third from n1; g the sixth of the cluster.
	if want := []string{"a", "b", "d", "e", "f"}; !slices.Equal(started, want) {
		t.Fatalf("started %v, want %v", started, want)
	}
	// One ends: the oldest waiting one that fits starts.
	m := f.migration("mig-d")
	m.Status.SetPhase(virtv1.MigrationFailed, metav1.NewTime(f.clock.Now()))
	f.must(f.virt.Tracker().Update(virtv1.SchemeGroupVersion.WithResource("virtualmachineinstancemigrations"), m, "ns"))
	f.syncMigration("mig-c")
	f.syncMigration("mig-g")
	if phaseOf(f, "mig-c") != virtv1.MigrationPending || phaseOf(f, "mig-g") != virtv1.MigrationScheduling {
		t.Errorf("after one ended: c %s, g %s; want c still Pending (its node is full), g started", phaseOf(f, "mig-c"), phaseOf(f, "mig-g"))
	}
}

// TestLimitsOnAStaleCache: the limits count the migrations this controller
// admitted whose move past Pending the cache has not shown yet. Without
// that, an older migration that became Pending after them was admitted on
// top: six ran under a limit of five in test/nodes.
func TestLimitsOnAStaleCache(t *testing.T) {
	cfg := DefaultConfig(testPodConfig)
	cfg.ParallelPerCluster = 2
	objs := []runtime.Object{node("spare"), node("n1"), node("n2"), node("n3")}
	for i, name := range []string{"a", "b", "c"} {
		vmi := runningVMI(name, fmt.Sprintf("n%d", i+1))
		objs = append(objs, vmi, sourcePod(vmi))
	}
	// c is the oldest, but its Pending is not in the cache yet.
	objs = append(objs,
		newMigration("mig-a", "a", inPhase(virtv1.MigrationPending), createdAt(t0.Add(time.Second))),
		newMigration("mig-b", "b", inPhase(virtv1.MigrationPending), createdAt(t0.Add(2*time.Second))),
		newMigration("mig-c", "c", withFinalizer, createdAt(t0)))
	f := newFixture(t, cfg, objs...)
	f.refresh()
	sync := func(name string) {
		t.Helper()
		_, err := f.ctrl.sync(t.Context(), "ns/"+name)
		f.must(err)
	}
	// a and b start; the cache still shows both Pending.
	sync("mig-a")
	sync("mig-b")
	// c becomes Pending, and the cache shows only that.
	c := f.migration("mig-c")
	c.Status.SetPhase(virtv1.MigrationPending, metav1.NewTime(t0))
	f.must(f.virt.Tracker().Update(virtv1.SchemeGroupVersion.WithResource("virtualmachineinstancemigrations"), c, "ns"))
	f.must(f.ctrl.vmimIndexer.Update(c))
	sync("mig-c")
	got := []virtv1.VirtualMachineInstanceMigrationPhase{phaseOf(f, "mig-a"), phaseOf(f, "mig-b"), phaseOf(f, "mig-c")}
	want := []virtv1.VirtualMachineInstanceMigrationPhase{virtv1.MigrationScheduling, virtv1.MigrationScheduling, virtv1.MigrationPending}
	if !slices.Equal(got, want) {
		t.Fatalf("phases of a, b, c: %v, want %v (at most 2 at once)", got, want)
	}
	// Once a ends and the cache has caught up, c starts.
	a := f.migration("mig-a")
	a.Status.SetPhase(virtv1.MigrationFailed, metav1.NewTime(f.clock.Now()))
	f.must(f.virt.Tracker().Update(virtv1.SchemeGroupVersion.WithResource("virtualmachineinstancemigrations"), a, "ns"))
	f.syncMigration("mig-c")
	if p := phaseOf(f, "mig-c"); p != virtv1.MigrationScheduling {
		t.Errorf("c after a ended: %s, want Scheduling", p)
	}
}

func createdAt(t time.Time) func(*virtv1.VirtualMachineInstanceMigration) {
	return func(m *virtv1.VirtualMachineInstanceMigration) { m.CreationTimestamp = metav1.NewTime(t) }
}

// TestEvacuationsFirst: with one slot free, an evacuation created after a
// user's migration takes it.
func TestEvacuationsFirst(t *testing.T) {
	cfg := DefaultConfig(testPodConfig)
	cfg.ParallelPerCluster = 1
	user, evac := runningVMI("user", "n1"), runningVMI("evac", "n2")
	f := newFixture(t, cfg, node("n1"), node("n2"), node("n3"), user, sourcePod(user), evac, sourcePod(evac),
		newMigration("mig-user", "user", inPhase(virtv1.MigrationPending)),
		newMigration("mig-evac", "evac", inPhase(virtv1.MigrationPending), func(m *virtv1.VirtualMachineInstanceMigration) {
			m.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
			m.Annotations = map[string]string{virtv1.EvacuationMigrationAnnotation: "n2"}
		}))
	f.syncMigration("mig-user")
	f.syncMigration("mig-evac")
	if phaseOf(f, "mig-user") != virtv1.MigrationPending || phaseOf(f, "mig-evac") != virtv1.MigrationScheduling {
		t.Errorf("user %s, evacuation %s; want the evacuation to start first", phaseOf(f, "mig-user"), phaseOf(f, "mig-evac"))
	}
}

// TestEvacuationBackoff: an evacuation after a failed one waits 20 s.
func TestEvacuationWaitsOutTheBackoff(t *testing.T) {
	vmi := runningVMI("vm1", "node1")
	evacuation := func(m *virtv1.VirtualMachineInstanceMigration) {
		m.Annotations = map[string]string{virtv1.EvacuationMigrationAnnotation: "node1"}
	}
	failed := newMigration("old", "vm1", evacuation, inPhase(virtv1.MigrationFailed))
	failed.Status.PhaseTransitionTimestamps[0].PhaseTransitionTimestamp = metav1.NewTime(t0.Add(-5 * time.Second))
	f := newFixture(t, Config{}, node("node1"), node("node2"), vmi, sourcePod(vmi), failed,
		newMigration("mig", "vm1", evacuation, inPhase(virtv1.MigrationPending)))
	if after := f.syncMigration("mig"); after != 15*time.Second {
		t.Errorf("back-off %s, want 15s", after)
	}
	wantPhase(t, f, "mig", virtv1.MigrationPending)
	if !hasEvent(f.events(), "Normal "+ReasonBackoff) {
		t.Error("no back-off event")
	}
	f.clock.Step(15 * time.Second)
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationScheduling)
}

// TestCancel: a migration deleted before it runs fails Aborted at once; one
// deleted while it runs asks the source to abort and ends with its answer.
func TestCancel(t *testing.T) {
	t.Run("before running", func(t *testing.T) {
		vmi := runningVMI("vm1", "node1")
		f := newFixture(t, Config{}, node("node1"), node("node2"), vmi, sourcePod(vmi), newMigration("mig", "vm1", inPhase(virtv1.MigrationPending)))
		f.syncMigration("mig")
		target := launcherpod.TargetName(vmi, "uid-mig")
		f.deleteMigration("mig")
		f.syncMigration("mig")
		wantPhase(t, f, "mig", virtv1.MigrationFailed)
		if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c.Reason != virtv1.MigrationReasonAborted {
			t.Errorf("reason %q, want Aborted", c.Reason)
		}
		f.syncMigration("mig")
		if f.pod(target) != nil {
			t.Error("the target pod is still there")
		}
		if m := f.migration("mig"); m != nil && finalizer.Has(m, virtv1.MigrationFinalizer) {
			t.Error("the finalizer is still there")
		}
	})
	t.Run("while running", func(t *testing.T) {
		f, vmi, target := handedOverFixture(t)
		f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) {
			s.MigrationState.TargetNodeAddress = "198.18.0.12"
			s.MigrationState.StartTimestamp = ptr.To(metav1.NewTime(f.clock.Now()))
		})
		f.syncMigration("mig")
		wantPhase(t, f, "mig", virtv1.MigrationRunning)
		f.deleteMigration("mig")
		f.syncMigration("mig")
		if ms := f.vmi("vm1").Status.MigrationState; !ms.AbortRequested {
			t.Fatal("abortRequested not written")
		}
		wantPhase(t, f, "mig", virtv1.MigrationRunning)
		if f.pod(target) == nil {
			t.Fatal("the target pod was deleted while the job runs")
		}
		f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) {
			s.MigrationState.AbortStatus = virtv1.MigrationAbortSucceeded
			s.MigrationState.Failed = true
		})
		f.syncMigration("mig")
		wantPhase(t, f, "mig", virtv1.MigrationFailed)
		if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c.Reason != virtv1.MigrationReasonAborted {
			t.Errorf("reason %q, want Aborted", c.Reason)
		}
		f.syncMigration("mig")
		if f.pod(target) != nil || f.pod(launcherpod.Name(vmi)) == nil {
			t.Error("want the target pod gone, the source kept")
		}
	})
}

// TestSameNode: a single node migrates to itself under IfOnlyNode and fails
// fast under Never.
func TestSameNode(t *testing.T) {
	for _, tt := range []struct {
		policy    SameNodePolicy
		wantPhase virtv1.VirtualMachineInstanceMigrationPhase
	}{{SameNodeIfOnlyNode, virtv1.MigrationScheduling}, {SameNodeNever, virtv1.MigrationFailed}, {SameNodeAlways, virtv1.MigrationScheduling}} {
		t.Run(string(tt.policy), func(t *testing.T) {
			cfg := DefaultConfig(testPodConfig)
			cfg.SameNode = tt.policy
			vmi := runningVMI("vm1", "node1")
			f := newFixture(t, cfg, node("node1"), vmi, sourcePod(vmi), newMigration("mig", "vm1", inPhase(virtv1.MigrationPending)))
			f.syncMigration("mig")
			wantPhase(t, f, "mig", tt.wantPhase)
			if tt.wantPhase == virtv1.MigrationFailed {
				if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c.Reason != virtv1.MigrationReasonSameNodeRefused {
					t.Errorf("reason %q", c.Reason)
				}
				return
			}
			if a := f.pod(launcherpod.TargetName(vmi, "uid-mig")).Spec.Affinity; a != nil && a.NodeAffinity != nil {
				t.Errorf("same-node target pod has node affinity %+v", a.NodeAffinity)
			}
		})
	}
}

// TestNotMigratable: a migration of a VMI that cannot move fails naming why.
func TestNotMigratable(t *testing.T) {
	vmi := runningVMI("vm1", "node1", func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Volumes = []virtv1.Volume{{Name: "data", VolumeSource: virtv1.VolumeSource{
			PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "local"}}}}
	})
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "local"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}
	f := newFixture(t, Config{}, node("node1"), node("node2"), vmi, sourcePod(vmi), claim, newMigration("mig", "vm1", inPhase(virtv1.MigrationPending)))
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationFailed)
	if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c == nil ||
		!containsAll(c.Message, "volume data", "not ReadWriteMany") {
		t.Errorf("condition %+v, want the volume named", c)
	}
	// The VMI's condition says the same.
	f.syncVMI("vm1")
	if c := f.vmi("vm1").Status.Condition(virtv1.VirtualMachineInstanceIsMigratable); c == nil || c.Status != corev1.ConditionFalse ||
		c.Reason != virtv1.ReasonDisksNotMigratable {
		t.Errorf("LiveMigratable %+v", c)
	}
}

// TestEvacuation: a VMI marked by the eviction webhook gets one evacuation
// migration, even while the cache lags behind the create; External and
// already-moved VMIs get none.
func TestEvacuation(t *testing.T) {
	marked := func(v *virtv1.VirtualMachineInstance) { v.Status.EvacuationNodeName = "node1" }
	external := func(v *virtv1.VirtualMachineInstance) {
		v.Spec.EvictionStrategy = ptr.To(virtv1.EvictionStrategyExternal)
	}
	for _, tt := range []struct {
		name string
		vmi  *virtv1.VirtualMachineInstance
		want int
	}{
		{"LiveMigrate", runningVMI("vm1", "node1", marked), 1},
		{"External", runningVMI("vm1", "node1", marked, external), 0},
		{"not marked", runningVMI("vm1", "node1"), 0},
		{"moved already", runningVMI("vm1", "node2", marked), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{}, node("node1"), node("node2"), tt.vmi, sourcePod(tt.vmi))
			f.syncVMI("vm1") // the LiveMigratable condition
			f.syncVMI("vm1")
			// The cache has not seen the create: no second one.
			if _, err := f.ctrl.syncVMI(t.Context(), "ns/vm1"); err != nil {
				t.Fatal(err)
			}
			list, err := f.virt.VirtualizationV1().VirtualMachineInstanceMigrations("ns").List(t.Context(), metav1.ListOptions{})
			f.must(err)
			if len(list.Items) != tt.want {
				t.Fatalf("%d migrations, want %d", len(list.Items), tt.want)
			}
			if tt.want == 1 {
				m := list.Items[0]
				if m.Annotations[virtv1.EvacuationMigrationAnnotation] != "node1" || m.Spec.VMIName != "vm1" {
					t.Errorf("evacuation migration %+v", m.ObjectMeta)
				}
				f.syncVMI("vm1")
				if list, _ := f.virt.VirtualizationV1().VirtualMachineInstanceMigrations("ns").List(t.Context(), metav1.ListOptions{}); len(list.Items) != 1 {
					t.Errorf("%d migrations once the cache caught up, want still 1", len(list.Items))
				}
			}
		})
	}
}

// TestEvacuationMarkCleared: once the guest left the drained node, the mark
// goes.
func TestEvacuationMarkCleared(t *testing.T) {
	vmi := runningVMI("vm1", "node2", func(v *virtv1.VirtualMachineInstance) { v.Status.EvacuationNodeName = "node1" })
	f := newFixture(t, Config{}, node("node1"), node("node2"), vmi, sourcePod(vmi))
	f.syncVMI("vm1")
	if got := f.vmi("vm1").Status.EvacuationNodeName; got != "" {
		t.Errorf("evacuationNodeName %q, want it cleared", got)
	}
}

// TestVMIGone: a migration of a VMI that ended fails, and its target pod goes.
func TestVMIGone(t *testing.T) {
	vmi := runningVMI("vm1", "node1")
	f := newFixture(t, Config{}, node("node1"), node("node2"), vmi, sourcePod(vmi), newMigration("mig", "vm1", inPhase(virtv1.MigrationPending)))
	f.syncMigration("mig")
	f.updateVMIStatus("vm1", func(s *virtv1.VirtualMachineInstanceStatus) { s.Phase = virtv1.Failed })
	f.syncMigration("mig")
	wantPhase(t, f, "mig", virtv1.MigrationFailed)
	if c := f.migration("mig").Status.Condition(virtv1.VirtualMachineInstanceMigrationFailedCondition); c.Reason != virtv1.MigrationReasonVMIGone {
		t.Errorf("reason %q", c.Reason)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
