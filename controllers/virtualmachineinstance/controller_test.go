package virtualmachineinstance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/internal/vmipod"
	"kubevirt.dev/virt/launcher/layout"
)

// TestSchedulingTransitions covers every state of a VMI before the hand-off:
// given the VMI and its pod as the caches have them (and, for the checks the
// controller makes against the API, as the API has them), it asserts the
// VMI's status and the pods that exist after one sync.
func TestSchedulingTransitions(t *testing.T) {
	tests := []struct {
		name string
		vmi  *virtv1.VirtualMachineInstance
		pod  *corev1.Pod // in the cache and in the API
		// apiOnlyPod is in the API but not yet in the cache.
		apiOnlyPod *corev1.Pod

		wantPhase    virtv1.VirtualMachineInstancePhase
		wantReason   string
		wantNode     string
		wantPods     int
		wantWrites   int
		wantEvent    string
		wantPodSched *virtv1.VirtualMachineInstanceCondition
	}{{
		name:       "new VMI gets its pod and is Scheduling",
		vmi:        newVMI(),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 1,
		wantEvent:  "Normal SuccessfulCreate",
	}, {
		name:       "a VMI with no phase yet is treated as Pending",
		vmi:        newVMI(func(v *virtv1.VirtualMachineInstance) { v.Status.Phase = "" }),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 1,
	}, {
		name:       "Pending VMI whose pod exists moves to Scheduling without a second pod",
		vmi:        newVMI(),
		pod:        newPod(newVMI()),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 1,
	}, {
		name:       "a pending pod changes nothing",
		vmi:        newVMI(scheduling("pod-uid")),
		pod:        newPod(newVMI()),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 0,
	}, {
		name:       "the pod bound to a node waits for the next write",
		vmi:        newVMI(scheduling("pod-uid")),
		pod:        newPod(newVMI(), boundTo("node1"), launcherCreating),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 0,
	}, {
		name: "an unschedulable pod is mirrored in the PodScheduled condition",
		vmi:  newVMI(scheduling("pod-uid")),
		pod: newPod(newVMI(), podCond(corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable,
			"0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.")),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 1,
		wantPodSched: &virtv1.VirtualMachineInstanceCondition{
			Type: virtv1.VirtualMachineInstancePodScheduled, Status: corev1.ConditionFalse, Reason: virtv1.ReasonUnschedulable,
			Message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.", LastTransitionTime: podConditionTime,
		},
	}, {
		name: "a launcher whose container is not running yet is not handed off",
		vmi: newVMI(scheduling("pod-uid"), func(v *virtv1.VirtualMachineInstance) {
			v.Status.Conditions = []virtv1.VirtualMachineInstanceCondition{{
				Type: virtv1.VirtualMachineInstancePodScheduled, Status: corev1.ConditionFalse, Reason: virtv1.ReasonUnschedulable}}
		}),
		pod:        newPod(newVMI(), boundTo("node1"), launcherCreating),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 1, // PodScheduled went from False to True: worth telling at once
		wantPodSched: &virtv1.VirtualMachineInstanceCondition{
			Type: virtv1.VirtualMachineInstancePodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: podConditionTime,
		},
	}, {
		// Its startup probe has not passed: the node waits for the
		// launcher to serve, sooner than the probe's period.
		name:       "a running launcher hands the VMI to its node before it is ready",
		vmi:        newVMI(scheduling("pod-uid")),
		pod:        newPod(newVMI(), boundTo("node1"), running(false)),
		wantPhase:  virtv1.Scheduled,
		wantNode:   "node1",
		wantPods:   1,
		wantWrites: 1,
		wantEvent:  "Normal Scheduled",
		wantPodSched: &virtv1.VirtualMachineInstanceCondition{
			Type: virtv1.VirtualMachineInstancePodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: podConditionTime,
		},
	}, {
		name:       "a failed pod fails the VMI",
		vmi:        newVMI(scheduling("pod-uid")),
		pod:        newPod(newVMI(), boundTo("node1"), podPhase(corev1.PodFailed)),
		wantPhase:  virtv1.Failed,
		wantReason: virtv1.ReasonPodFailed,
		wantPods:   1, // kept for its logs
		wantWrites: 1,
		wantEvent:  "Warning PodFailed",
	}, {
		name:       "a launcher that exits 0 before the hand-off fails the VMI too",
		vmi:        newVMI(scheduling("pod-uid")),
		pod:        newPod(newVMI(), boundTo("node1"), podPhase(corev1.PodSucceeded)),
		wantPhase:  virtv1.Failed,
		wantReason: virtv1.ReasonPodFailed,
		wantPods:   1,
		wantWrites: 1,
	}, {
		// The pod runs on (a container disk's holder, say) but no
		// launcher does: nothing will ever be handed over.
		name: "a launcher that exits in a pod that runs on fails the VMI",
		vmi:  newVMI(scheduling("pod-uid")),
		pod: newPod(newVMI(), boundTo("node1"), running(false), func(p *corev1.Pod) {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: layout.ComputeContainer, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}})
		}),
		wantPhase:  virtv1.Failed,
		wantReason: virtv1.ReasonPodFailed,
		wantPods:   1,
		wantWrites: 1,
		wantEvent:  "Warning PodFailed",
	}, {
		// containerd 1.6 under load: the holder's task never started, the
		// launcher runs and would wait minutes for the holder's files.
		name: "a holder that ended before the hand-off fails the VMI",
		vmi:  newVMI(scheduling("pod-uid")),
		pod: newPod(newVMI(), boundTo("node1"), running(false), func(p *corev1.Pod) {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: "kernel-boot", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 128, Reason: "StartError", Message: "failed to create containerd task"}}})
		}),
		wantPhase:  virtv1.Failed,
		wantReason: virtv1.ReasonPodFailed,
		wantPods:   1,
		wantWrites: 1,
		wantEvent:  "Warning PodFailed container kernel-boot of launcher pod",
	}, {
		name:       "a pod being deleted fails the VMI",
		vmi:        newVMI(scheduling("pod-uid")),
		pod:        newPod(newVMI(), boundTo("node1"), running(true), podDeleting),
		wantPhase:  virtv1.Failed,
		wantReason: virtv1.ReasonPodDeleted,
		wantPods:   1,
		wantWrites: 1,
		wantEvent:  "Warning PodDeleted",
	}, {
		name:       "a pod that disappeared fails the VMI",
		vmi:        newVMI(scheduling("pod-uid")),
		wantPhase:  virtv1.Failed,
		wantReason: virtv1.ReasonPodDeleted,
		wantPods:   0,
		wantWrites: 1,
		wantEvent:  "Warning PodDeleted",
	}, {
		name:       "a pod missing only from the cache is waited for, not recreated",
		vmi:        newVMI(scheduling("pod-uid")),
		apiOnlyPod: newPod(newVMI()),
		wantPhase:  virtv1.Scheduling,
		wantPods:   1,
		wantWrites: 0,
	}, {
		name:       "a handed-off VMI is the node's",
		vmi:        newVMI(handedOff("node1", virtv1.Running)),
		pod:        newPod(newVMI(), boundTo("node1"), podPhase(corev1.PodFailed)),
		wantPhase:  virtv1.Running,
		wantNode:   "node1",
		wantPods:   1,
		wantWrites: 0,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cached []*corev1.Pod
			if tt.pod != nil {
				cached = append(cached, tt.pod)
			}
			f := newFixture(t, []*virtv1.VirtualMachineInstance{tt.vmi}, cached)
			if tt.apiOnlyPod != nil {
				if err := f.kube.Tracker().Add(tt.apiOnlyPod); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.sync(tt.vmi); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got := f.vmi(tt.vmi)
			if got.Status.Phase != tt.wantPhase || got.Status.Reason != tt.wantReason || got.Status.NodeName != tt.wantNode {
				t.Errorf("status phase=%q reason=%q node=%q, want %q %q %q", got.Status.Phase, got.Status.Reason,
					got.Status.NodeName, tt.wantPhase, tt.wantReason, tt.wantNode)
			}
			if n := len(f.pods()); n != tt.wantPods {
				t.Errorf("%d pods exist, want %d", n, tt.wantPods)
			}
			if n := f.statusWrites(); n != tt.wantWrites {
				t.Errorf("%d status writes, want %d", n, tt.wantWrites)
			}
			if tt.wantEvent != "" {
				f.expectEvent(tt.wantEvent)
			}
			if tt.wantPodSched != nil {
				c := got.Status.Condition(virtv1.VirtualMachineInstancePodScheduled)
				if c == nil {
					t.Fatalf("no PodScheduled condition in %+v", got.Status.Conditions)
				}
				if d := cmp.Diff(tt.wantPodSched, c); d != "" {
					t.Errorf("PodScheduled condition (-want +got):\n%s", d)
				}
			}
			if tt.wantPhase != tt.vmi.Status.Phase {
				ts := got.Status.PhaseTransitionTimestamps
				if len(ts) == 0 || ts[len(ts)-1].Phase != tt.wantPhase {
					t.Errorf("no phase transition timestamp for %s: %+v", tt.wantPhase, ts)
				}
			}
		})
	}
}

// TestScheduledStatus checks everything the hand-off write carries.
func TestScheduledStatus(t *testing.T) {
	vmi := newVMI(scheduling("pod-uid"))
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{newPod(vmi, boundTo("node1"), running(true))})
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	s := f.vmi(vmi).Status
	if d := cmp.Diff(map[types.UID]string{"pod-uid": "node1"}, s.ActivePods); d != "" {
		t.Errorf("activePods (-want +got):\n%s", d)
	}
	if s.LauncherContainerImageVersion != testPodConfig.LauncherImage {
		t.Errorf("launcherContainerImageVersion = %q", s.LauncherContainerImageVersion)
	}
}

// TestExactlyOnePod replays the informer lag that would make a naive
// controller create a second pod: the VMI's Scheduling status reaches the
// cache before its pod does, and the controller syncs in between, also after
// its expectations expired.
func TestExactlyOnePod(t *testing.T) {
	vmi := newVMI()
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	for i := range 3 {
		if err := f.sync(vmi); err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
	}
	if n := len(f.pods()); n != 1 {
		t.Fatalf("%d pods after three syncs on a lagging cache, want 1", n)
	}
	// The VMI's status write arrives; the pod's event still lags.
	cur := f.vmi(vmi)
	if err := f.vmiStore.Update(cur); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(10 * time.Minute) // past the expectations' TTL
	if err := f.sync(vmi); err != nil {
		t.Fatalf("sync after TTL: %v", err)
	}
	got := f.vmi(vmi)
	if n := len(f.pods()); n != 1 || got.Status.Phase != virtv1.Scheduling {
		t.Errorf("after the TTL: %d pods and phase %s, want 1 pod and Scheduling", n, got.Status.Phase)
	}
	// A controller starting over (a new leader) with an empty cache and a
	// Pending VMI — its predecessor created the pod but died before the
	// status write — gets AlreadyExists, not a second pod.
	f2 := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	if err := f2.kube.Tracker().Add(f.pods()[0].DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := f2.sync(vmi); err == nil {
		t.Errorf("sync of a Pending VMI whose pod exists unobserved succeeded; want a retry")
	}
	if n := len(f2.pods()); n != 1 {
		t.Errorf("new leader: %d pods, want 1", n)
	}
}

// TestHappyPathWrites walks a VMI from creation to the hand-off through the
// controller and the informers and counts the status writes: Scheduling and
// Scheduled, nothing in between.
func TestHappyPathWrites(t *testing.T) {
	vmi := newVMI()
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, nil)
	step := func(what string, mutate func(*corev1.Pod)) {
		t.Helper()
		if mutate != nil {
			pod := f.pods()[0]
			mutate(&pod)
			if err := f.kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), &pod, pod.Namespace); err != nil {
				t.Fatal(err)
			}
		}
		f.refresh()
		if err := f.sync(vmi); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	step("create", nil)
	step("observe", nil)
	step("bind", boundTo("node1"))
	step("creating", launcherCreating)
	step("running", running(false))
	step("ready", func(p *corev1.Pod) {
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionTrue
			}
		}
		containersReady(true)(p)
	})
	step("settled", nil)
	got := f.vmi(vmi)
	if got.Status.Phase != virtv1.Scheduled || got.Status.NodeName != "node1" {
		t.Errorf("phase %s node %q, want Scheduled on node1", got.Status.Phase, got.Status.NodeName)
	}
	if n := f.statusWrites(); n != 2 {
		t.Errorf("%d status writes from Pending to Scheduled, want 2", n)
	}
	if n := len(f.pods()); n != 1 {
		t.Errorf("%d pods, want 1", n)
	}
}

// TestDeletion covers the release of a VMI that is being deleted.
func TestDeletion(t *testing.T) {
	tests := []struct {
		name           string
		vmi            *virtv1.VirtualMachineInstance
		pod            *corev1.Pod
		wantPodDeleted bool
		wantFinalizers []string
	}{{
		name:           "never handed off: the pod goes at once, and no guest ever ran",
		vmi:            newVMI(scheduling("pod-uid"), deleting),
		pod:            newPod(newVMI(), boundTo("node1"), running(true)),
		wantPodDeleted: true,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer},
	}, {
		name:           "never handed off and the pod is gone: released",
		vmi:            newVMI(scheduling("pod-uid"), deleting),
		wantFinalizers: []string{},
	}, {
		name:           "a Pending VMI without a pod: released, no pod created",
		vmi:            newVMI(deleting),
		wantFinalizers: []string{},
	}, {
		name:           "handed off, guest still up: the node shuts it down first",
		vmi:            newVMI(handedOff("node1", virtv1.Running), deleting),
		pod:            newPod(newVMI(), boundTo("node1"), running(true)),
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}, {
		name:           "handed off, the node removed its finalizer: the pod goes",
		vmi:            newVMI(handedOff("node1", virtv1.Running), deleting, withoutGuestFinalizer),
		pod:            newPod(newVMI(), boundTo("node1"), running(true)),
		wantPodDeleted: true,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer},
	}, {
		name:           "handed off, the VMI ended: the pod goes",
		vmi:            newVMI(handedOff("node1", virtv1.Succeeded), deleting),
		pod:            newPod(newVMI(), boundTo("node1"), running(true)),
		wantPodDeleted: true,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}, {
		name:           "handed off, the launcher exited: the pod goes",
		vmi:            newVMI(handedOff("node1", virtv1.Running), deleting),
		pod:            newPod(newVMI(), boundTo("node1"), running(true), computeTerminated),
		wantPodDeleted: true,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}, {
		name:           "handed off, the pod is terminating: wait for it",
		vmi:            newVMI(handedOff("node1", virtv1.Succeeded), deleting, withoutGuestFinalizer),
		pod:            newPod(newVMI(), boundTo("node1"), podDeleting),
		wantFinalizers: []string{virtv1.LauncherPodFinalizer},
	}, {
		name:           "handed off, the pod is gone: the launcher-pod finalizer goes, the node's stays",
		vmi:            newVMI(handedOff("node1", virtv1.Running), deleting),
		wantFinalizers: []string{virtv1.GuestShutdownFinalizer},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*corev1.Pod
			if tt.pod != nil {
				pods = append(pods, tt.pod)
			}
			f := newFixture(t, []*virtv1.VirtualMachineInstance{tt.vmi}, pods)
			if err := f.sync(tt.vmi); err != nil {
				t.Fatalf("sync: %v", err)
			}
			podExists := len(f.pods()) > 0
			if tt.pod != nil && podExists == tt.wantPodDeleted {
				t.Errorf("pod exists: %v, want deleted: %v", podExists, tt.wantPodDeleted)
			}
			if tt.pod == nil && podExists {
				t.Errorf("a pod was created for a VMI being deleted")
			}
			got := f.vmi(tt.vmi)
			if d := cmp.Diff(tt.wantFinalizers, got.Finalizers, cmpEmpty); d != "" {
				t.Errorf("finalizers (-want +got):\n%s", d)
			}
			if n := f.statusWrites(); n != 0 {
				t.Errorf("%d status writes while deleting, want 0", n)
			}
		})
	}
}

var cmpEmpty = cmp.Transformer("empty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

// TestFinalPhaseDeletesRunningPod: an ended VMI frees its node's resources
// but keeps a pod that ended for its logs.
func TestFinalPhaseDeletesRunningPod(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		wantPods int
	}{
		{"running launcher", newPod(newVMI(), boundTo("node1"), running(true)), 0},
		{"ended launcher", newPod(newVMI(), boundTo("node1"), podPhase(corev1.PodSucceeded)), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := newVMI(handedOff("node1", virtv1.Failed))
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{tt.pod})
			if err := f.sync(vmi); err != nil {
				t.Fatal(err)
			}
			if n := len(f.pods()); n != tt.wantPods {
				t.Errorf("%d pods, want %d", n, tt.wantPods)
			}
			if tt.wantPods == 0 {
				f.expectEvent("Normal SuccessfulDelete")
			}
		})
	}
}

// TestPodEventsFindTheirVMI: events of pods of other owners are ignored.
func TestPodEventsFindTheirVMI(t *testing.T) {
	pod := newPod(newVMI())
	if got := vmipod.VMIKey(pod); got != "ns/vmi1" {
		t.Errorf("vmiKey = %q, want ns/vmi1", got)
	}
	pod.OwnerReferences[0].Kind = "ReplicaSet"
	if got := vmipod.VMIKey(pod); got != "" {
		t.Errorf("vmiKey of a ReplicaSet's pod = %q, want none", got)
	}
	if launcherpod.Name(newVMI()) != newPod(newVMI()).Name {
		t.Errorf("fixture pods are not named like the controller's")
	}
}
