package nodehealth

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
	"kubevirt.dev/virt/internal/ownership"
	"kubevirt.dev/virt/internal/ownership/ownershiptest"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const timeout = time.Minute

func newNode(heartbeat *time.Time) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", Labels: map[string]string{virtv1.SchedulableNodeLabel: "true"}}}
	if heartbeat != nil {
		n.Annotations = map[string]string{virtv1.HeartbeatAnnotation: heartbeat.Format(time.RFC3339)}
	}
	return n
}

func newVMI(phase virtv1.VirtualMachineInstancePhase, mutate ...func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vmi1", UID: "uid1", ResourceVersion: "5",
			Finalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer}},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: phase, NodeName: "node1",
			Conditions: []virtv1.VirtualMachineInstanceCondition{{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}}},
	}
	for _, m := range mutate {
		m(vmi)
	}
	return vmi
}

func deleting(v *virtv1.VirtualMachineInstance) {
	v.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Second)))
}

func TestUnresponsiveNode(t *testing.T) {
	fresh, old := now.Add(-10*time.Second), now.Add(-2*time.Minute)
	tests := []struct {
		name           string
		node           *corev1.Node
		vmi            *virtv1.VirtualMachineInstance
		wantPhase      virtv1.VirtualMachineInstancePhase
		wantReason     string
		wantFinalizers []string
		wantRequeue    bool
	}{{
		name:           "fresh heartbeat: nothing happens, the node is looked at again when it would go stale",
		node:           newNode(&fresh),
		vmi:            newVMI(virtv1.Running),
		wantPhase:      virtv1.Running,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
		wantRequeue:    true,
	}, {
		name:           "stale heartbeat fails a Running VMI",
		node:           newNode(&old),
		vmi:            newVMI(virtv1.Running),
		wantPhase:      virtv1.Failed,
		wantReason:     virtv1.ReasonNodeUnresponsive,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}, {
		name:           "stale heartbeat fails a Scheduled VMI",
		node:           newNode(&old),
		vmi:            newVMI(virtv1.Scheduled),
		wantPhase:      virtv1.Failed,
		wantReason:     virtv1.ReasonNodeUnresponsive,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}, {
		name:           "a node without heartbeat is unresponsive",
		node:           newNode(nil),
		vmi:            newVMI(virtv1.Running),
		wantPhase:      virtv1.Failed,
		wantReason:     virtv1.ReasonNodeUnresponsive,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}, {
		name:           "a deleted node is unresponsive",
		vmi:            newVMI(virtv1.Running),
		wantPhase:      virtv1.Failed,
		wantReason:     virtv1.ReasonNodeUnresponsive,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}, {
		name:           "a VMI being deleted on a stale node loses the guest-shutdown finalizer",
		node:           newNode(&old),
		vmi:            newVMI(virtv1.Running, deleting),
		wantPhase:      virtv1.Failed,
		wantReason:     virtv1.ReasonNodeUnresponsive,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer},
	}, {
		name:           "an ended VMI being deleted on a stale node keeps its phase, loses the finalizer",
		node:           newNode(&old),
		vmi:            newVMI(virtv1.Succeeded, deleting),
		wantPhase:      virtv1.Succeeded,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer},
	}, {
		name:           "an ended VMI not being deleted is left alone",
		node:           newNode(&old),
		vmi:            newVMI(virtv1.Failed, func(v *virtv1.VirtualMachineInstance) { v.Status.Reason = virtv1.ReasonGuestCrashed }),
		wantPhase:      virtv1.Failed,
		wantReason:     virtv1.ReasonGuestCrashed,
		wantFinalizers: []string{virtv1.LauncherPodFinalizer, virtv1.GuestShutdownFinalizer},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kubeObjs []runtime.Object
			if tt.node != nil {
				kubeObjs = append(kubeObjs, tt.node)
			}
			kube := k8sfake.NewClientset(kubeObjs...)
			virt := virtfake.NewClientset(tt.vmi)
			ownershiptest.Guard(t, virt, ownership.NodeHealth)
			clock := clocktesting.NewFakeClock(now)
			recorder := record.NewFakeRecorder(10)
			nodes := kubeinformers.NewSharedInformerFactory(kube, 0).Core().V1().Nodes()
			vmis := virtinformers.NewSharedInformerFactory(virt, 0).Virtualization().V1().VirtualMachineInstances()
			c, err := New(t.Context(), virt, nodes, vmis, recorder, timeout, clock)
			if err != nil {
				t.Fatal(err)
			}
			if tt.node != nil {
				if err := nodes.Informer().GetIndexer().Add(tt.node); err != nil {
					t.Fatal(err)
				}
			}
			if err := vmis.Informer().GetIndexer().Add(tt.vmi); err != nil {
				t.Fatal(err)
			}

			if err := c.sync(t.Context(), "node1"); err != nil {
				t.Fatalf("sync: %v", err)
			}

			got, err := virt.VirtualizationV1().VirtualMachineInstances("ns").Get(t.Context(), "vmi1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != tt.wantPhase || got.Status.Reason != tt.wantReason {
				t.Errorf("phase %s reason %q, want %s %q", got.Status.Phase, got.Status.Reason, tt.wantPhase, tt.wantReason)
			}
			if !slices.Equal(got.Finalizers, tt.wantFinalizers) {
				t.Errorf("finalizers %v, want %v", got.Finalizers, tt.wantFinalizers)
			}
			if tt.wantReason == virtv1.ReasonNodeUnresponsive {
				if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Status != corev1.ConditionFalse {
					t.Errorf("Ready condition of a VMI on an unresponsive node: %+v", got.Status.Conditions)
				}
				select {
				case e := <-recorder.Events:
					if !strings.HasPrefix(e, "Warning NodeUnresponsive") {
						t.Errorf("event %q, want a NodeUnresponsive warning", e)
					}
				default:
					t.Errorf("no event")
				}
			}
			if tt.wantRequeue {
				// The node is due again 50 s + 1 s from now, and not before:
				// the fake clock moves only when stepped. The queue's delay
				// loop notices the step on its own goroutine.
				if n := c.queue.Len(); n != 0 {
					t.Fatalf("%d keys queued before the heartbeat went stale", n)
				}
				clock.Step(51 * time.Second)
				err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
					return c.queue.Len() > 0, nil
				})
				if err != nil || c.queue.Len() != 1 {
					t.Errorf("node not requeued for when its heartbeat goes stale: %d keys queued (%v)", c.queue.Len(), err)
				}
			}
		})
	}
}
