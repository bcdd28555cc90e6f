package virtualmachineinstance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
)

// targetPod is the target launcher pod of migration uid, on node.
func targetPod(uid types.UID, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod, err := launcherpod.NewTarget(newVMI(), testPodConfig, launcherpod.Target{MigrationUID: uid})
	if err != nil {
		panic(err)
	}
	pod.UID = "target-uid"
	pod.ResourceVersion = "1"
	pod.Status.Phase = corev1.PodPending
	boundTo(node)(pod)
	running(true)(pod)
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

// TestDeletionDuringMigration: a VMI deleted while or after it migrated
// waits for the node to shut down the guest wherever it runs. Neither the
// source pod that exited because the guest left it (ExitMigrated) nor a
// failed target pod says the guest is down.
func TestDeletionDuringMigration(t *testing.T) {
	source := func(mutate ...func(*corev1.Pod)) *corev1.Pod {
		return newPod(newVMI(), append([]func(*corev1.Pod){boundTo("node1"), running(true)}, mutate...)...)
	}
	migrated := func(completed bool) func(*virtv1.VirtualMachineInstance) {
		return func(v *virtv1.VirtualMachineInstance) {
			v.Status.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{MigrationUID: "mig-1", Completed: completed,
				SourcePod: launcherpod.Name(v), TargetPod: launcherpod.TargetName(v, "mig-1")}
			if completed {
				v.Status.NodeName = "node2"
				v.Status.ActivePods = map[types.UID]string{"target-uid": "node2"}
			}
		}
	}
	for _, tt := range []struct {
		name        string
		vmi         *virtv1.VirtualMachineInstance
		pods        []*corev1.Pod
		wantDeleted bool
	}{
		{name: "migrated: the source exited, the guest runs in the target",
			vmi:  newVMI(handedOff("node1", virtv1.Running), migrated(true), deleting),
			pods: []*corev1.Pod{source(computeTerminated), targetPod("mig-1", "node2")}},
		{name: "migrating: the target launcher died, the guest runs in the source",
			vmi:  newVMI(handedOff("node1", virtv1.Running), migrated(false), deleting),
			pods: []*corev1.Pod{source(), targetPod("mig-1", "node2", computeTerminated)}},
		{name: "migrated, then the guest's launcher exited: the guest is down",
			vmi:         newVMI(handedOff("node1", virtv1.Running), migrated(true), deleting),
			pods:        []*corev1.Pod{source(computeTerminated), targetPod("mig-1", "node2", computeTerminated)},
			wantDeleted: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []*virtv1.VirtualMachineInstance{tt.vmi}, tt.pods)
			if err := f.sync(tt.vmi); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if deleted := len(f.pods()) < len(tt.pods); deleted != tt.wantDeleted {
				t.Errorf("%d of %d pods left, want deleted: %v", len(f.pods()), len(tt.pods), tt.wantDeleted)
			}
		})
	}
}

// TestHandedOffVMIKeepsItsTargetPod: the VMI controller leaves a handed-off
// VMI's second (target) pod alone: it is no duplicate.
func TestHandedOffVMIKeepsItsTargetPod(t *testing.T) {
	vmi := newVMI(handedOff("node1", virtv1.Running))
	pods := []*corev1.Pod{newPod(newVMI(), boundTo("node1"), running(true)), targetPod("mig-1", "node2")}
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, pods)
	if err := f.sync(vmi); err != nil {
		t.Fatal(err)
	}
	if n := len(f.pods()); n != 2 {
		t.Errorf("%d pods left, want both", n)
	}
	if n := f.statusWrites(); n != 0 {
		t.Errorf("%d status writes, want none", n)
	}
}
